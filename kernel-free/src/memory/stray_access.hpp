// SPDX-License-Identifier: BSD-3-Clause
// A program that touches the segment range where no segment is (memory it freed, or an
// address past a segment's end) gets a SIGSEGV there, since the range is reserved without
// access. This reports it by name instead of a bare "Segmentation fault".
#pragma once

namespace squall::memory::detail {

void install_stray_access_reporter();  // once, when the layer starts

}  // namespace squall::memory::detail
