// SPDX-License-Identifier: BSD-3-Clause
// The userfaultfd interface, with the constants that installed kernel headers may lack
// (the headers can be older than the running kernel; features are probed at start-up).
#pragma once
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_SIGBUS
#define UFFD_FEATURE_SIGBUS (1 << 7)
#endif
#ifndef UFFD_FEATURE_THREAD_ID
#define UFFD_FEATURE_THREAD_ID (1 << 8)
#endif
#ifndef UFFD_FEATURE_MINOR_SHMEM
#define UFFD_FEATURE_MINOR_SHMEM (1 << 10)
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFDIO_REGISTER_MODE_MINOR
#define UFFDIO_REGISTER_MODE_MINOR ((__u64)1 << 2)
#endif
#ifndef UFFDIO_WRITEPROTECT_MODE_WP
#define UFFDIO_WRITEPROTECT_MODE_WP ((__u64)1 << 0)
#endif
#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)  // on /dev/userfaultfd (kernel 6.1+)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)  // kernel 6.7+
#endif

// PAGEMAP_SCAN on /proc/self/pagemap (kernel 6.7+), spelt here because the installed headers
// may predate it: which pages of a range were written since they were write-protected, and
// write-protecting them again in the same call.
#include <cstdint>
namespace squall::memory::detail::abi {
struct page_region {
  std::uint64_t start, end, categories;
};
struct pm_scan_arg {
  std::uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
  std::uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
constexpr unsigned long pagemap_scan = _IOWR('f', 16, pm_scan_arg);
constexpr std::uint64_t page_is_written = 1u << 1;
constexpr std::uint64_t scan_wp_matching = 1u << 0;    // PM_SCAN_WP_MATCHING
constexpr std::uint64_t scan_check_wp_async = 1u << 1;  // PM_SCAN_CHECK_WPASYNC
}  // namespace squall::memory::detail::abi
