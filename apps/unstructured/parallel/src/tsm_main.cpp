// SPDX-License-Identifier: BSD-3-Clause
// main() of every unstructured_tsm_<step>; CMake defines SQUALL_TSM_STEP as the step's name.
#include "squall/apps/unstructured/tsm_versions.hpp"

int main(int argc, char** argv) {
  using squall::apps::unstructured::TsmStep;
  return squall::apps::unstructured::tsm_main(argc, argv, TsmStep::SQUALL_TSM_STEP);
}
