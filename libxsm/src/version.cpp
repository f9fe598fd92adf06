// SPDX-License-Identifier: BSD-3-Clause
// (The library's code lives in its protocols' files; this one keeps the target non-empty
// until the first of them lands.)
namespace squall::xsm {
int library_marker = 0;
}
