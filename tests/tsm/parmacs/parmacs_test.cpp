// SPDX-License-Identifier: BSD-3-Clause
// PARMACS from outside: the macros program (parmacs/macros.C, every macro and what SPLASH-2
// programs rely on) under squallrun from 1 to 8 nodes on both fault paths; misuse that
// must end the job with a message, not hang; standard output lines kept whole; standard
// input reaching main.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "patterns.hpp"
#include "run_command.hpp"

namespace {

using squall::test::count_of;
using squall::test::report;
using squall::test::run;

// One worker per node unless `env` says otherwise (by default a node takes as many as it has
// processors, which depends on the machine).
std::string job(int nodes, const std::string& args, const std::string& env = "") {
  const std::string workers = env.find("SQUALL_WORKERS_PER_NODE") == std::string::npos ? "SQUALL_WORKERS_PER_NODE=1 " : "";
  return workers + env + " " + SQUALLRUN + " -n " + std::to_string(nodes) + " " + MACROS + " " + args;
}

// By default CREATE starts as many workers on a node as it has processors
// (squall::processors()), as threads: a program asking for that many runs on one node, and
// one more is refused with the count in the message. The default, whatever the suite's
// environment says (SQUALL_WORKERS_PER_NODE=1 runs it in the papers' mode).
TEST(Parmacs, ByDefaultANodeTakesAWorkerPerProcessor) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int processors = CPU_COUNT(&set);
  const std::string one_node = "env -u SQUALL_WORKERS_PER_NODE " + std::string(SQUALLRUN) + " -n 1 " + MACROS + " -p ";
  const auto fits = run(one_node + std::to_string(processors), 120);
  EXPECT_EQ(fits.status, 0) << fits.output;
  const auto over = run(one_node + std::to_string(processors + 1), 60);
  EXPECT_NE(over.status, 0) << over.output;
  EXPECT_EQ(count_of(over.output, "(1 node(s), " + std::to_string(processors) + " worker(s) per node)"), 1) << over.output;
}

TEST(Parmacs, EveryMacroFromOneToEightNodes) {
  for (const char* path : {"sigbus", "thread"}) {
    for (int n : {1, 2, 4, 8}) {
      const auto r = run(job(n, "-p " + std::to_string(n), std::string("SQUALL_FAULT_PATH=") + path), 120);
      EXPECT_EQ(r.status, 0) << path << " n=" << n << "\n" << r.output;
      EXPECT_EQ(count_of(r.output, "macros: ok on " + std::to_string(n) + " processes"), 1) << r.output;
    }
  }
}

// Workers as threads of a node (SQUALL_WORKERS_PER_NODE): every macro holds on one node of
// two threads, on nodes of two and of four threads, and with the last node not full, on both
// fault paths; CREATE says how many nodes a program needs with 2 per node.
TEST(Parmacs, WorkersAsThreadsOfANode) {
  const struct {
    int nodes, processes, per_node;
  } layouts[] = {{1, 2, 2}, {2, 4, 2}, {3, 5, 2}, {2, 8, 4}};
  for (const char* path : {"sigbus", "thread"}) {
    for (const auto& l : layouts) {
      const auto r = run(job(l.nodes, "-p " + std::to_string(l.processes),
                             std::string("SQUALL_FAULT_PATH=") + path + " SQUALL_WORKERS_PER_NODE=" + std::to_string(l.per_node)),
                         120);
      EXPECT_EQ(r.status, 0) << path << " n=" << l.nodes << " P=" << l.processes << "\n" << r.output;
      EXPECT_EQ(count_of(r.output, "macros: ok on " + std::to_string(l.processes) + " processes"), 1) << r.output;
    }
  }
  // Aggregated messages: a thread's send left in a partly filled packet while another
  // thread of its node waited (spinning, never sending) once hung the job.
  const auto aggregated = run(job(3, "-p 6", "SQUALL_WORKERS_PER_NODE=2 SQUALL_AGGREGATION=8"), 120);
  EXPECT_EQ(aggregated.status, 0) << aggregated.output;
  EXPECT_EQ(count_of(aggregated.output, "macros: ok on 6 processes"), 1) << aggregated.output;
  const auto big = run(job(2, "-p 4 -bad create", "SQUALL_WORKERS_PER_NODE=2"), 60);
  EXPECT_NE(big.status, 0);
  EXPECT_EQ(count_of(big.output, "than the 3 place(s) besides main (2 node(s), 2 worker(s) per node); run squallrun -n 32,"), 1)
      << big.output;
  const auto other = run(job(1, "-p 2", "SQUALL_WORKERS_PER_NODE=2 SQUALL_TSM_PROTOCOL=multiple-writer"), 60);
  EXPECT_NE(other.status, 0);
  EXPECT_EQ(count_of(other.output, "the multiple-writer protocol runs one worker per node"), 1) << other.output;
}

TEST(Parmacs, FewerProcessesThanNodes) {
  const auto r = run(job(4, "-p 2"), 120);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "macros: ok on 2 processes"), 1) << r.output;
  // Eleven nodes: node numbers of one and two digits, the environment still the same size.
  const auto wide = run(job(11, "-p 3"), 120);
  EXPECT_EQ(wide.status, 0) << wide.output;
  EXPECT_EQ(count_of(wide.output, "macros: ok on 3 processes"), 1) << wide.output;
}

TEST(Parmacs, OutputLinesStayWhole) {
  const auto r = run(job(4, "-p 4 -lines 300"), 120);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string whole = "line [0-3] [0-9]{4} \\.{64} end";
  std::istringstream in(r.output);
  int good = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("line ") == std::string::npos && line.find(" end") == std::string::npos) continue;
    const bool right = squall::test::match_whole(line, whole).has_value();
    EXPECT_TRUE(right) << "a broken line: [" << line << "]";
    good += right;
  }
  EXPECT_EQ(good, 4 * 300);
}

TEST(Parmacs, StandardInputGoesToMain) {
  const auto r = run("sh -c 'echo hello-from-stdin | " + job(2, "-p 2 -stdin") + "'", 120);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "stdin: hello-from-stdin"), 1) << r.output;
}

TEST(Parmacs, MisuseEndsTheJobWithAMessage) {
  const struct {
    const char* bad;
    int nodes;
    const char* message;
  } cases[] = {
      {"unlock", 2, "UNLOCK of a lock this process does not hold"},
      {"uninit", 2, "LOCK: the lock was not initialised by LOCKINIT"},
      {"malloc", 2, "no room for 1099511627776 bytes in the shared heap"},
      {"malloc-wrap", 2, "G_MALLOC or NU_MALLOC: squall: tsm::malloc: no room for 18446744073709551615 bytes"},
      {"create", 4, "CREATE: the program starts more workers than the 3 place(s) besides main (4 node(s), 1 worker(s) per node); run squallrun -n 64,"},
      {"barrier-count", 2, "BARRIER waits for 3 processes, but only 1 is running"},
      {"barrier-late", 4, "BARRIER waits for 4 processes, but only 3 are running"},
      {"pause-deadlock", 3, "every running process waits in a BARRIER or WAITPAUSE"},
      {"pause-deadlock", 1, "(1 process: main unless it waits in WAIT_FOR_END"},
  };
  for (const auto& c : cases) {
    const auto r = run(job(c.nodes, "-p " + std::to_string(c.nodes) + " -bad " + c.bad));
    EXPECT_FALSE(r.hung) << c.bad << "\n" << report(r);
    EXPECT_NE(r.status, 0) << c.bad << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, c.message), 1) << c.bad << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "was not reported"), 0) << r.output;
    std::printf("%s: %.1f s\n", c.bad, r.seconds);
  }
}

// A process that waits long at a BARRIER or a WAITPAUSE says once what it waits for
// (SQUALL_WAIT_NOTICE_S), then goes on when the other comes.
TEST(Parmacs, LongWaitsSayWhatTheyWaitFor) {
  const auto r = run(job(2, "-p 2 -slow", "SQUALL_WAIT_NOTICE_S=1"), 60);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "macros: slow ok"), 1) << r.output;
  EXPECT_EQ(count_of(r.output, "node 0: warning: has waited 1 s for the other processes at BARRIER "), 1) << r.output;
  EXPECT_EQ(count_of(r.output, " (2 processes, counted at node 0); still waiting"), 1) << r.output;
  EXPECT_EQ(count_of(r.output, "node 0: warning: has waited 1 s for a SETPAUSE of pause "), 1) << r.output;
  EXPECT_EQ(count_of(r.output, "warning: has waited"), 2) << r.output;
}

// Built as a plain `cc prog.c` would (no -fPIC, no -z now): stdout and the lazily bound
// GOT then sit among the shared globals. It still works, and a node that loses node 0
// exits at once rather than when squallrun kills it (its exit must not read `stdout`).
TEST(Parmacs, APlainlyCompiledProgramWorksToo) {
  for (const char* path : {"thread", "sigbus"}) {
    const auto r = run(std::string("SQUALL_FAULT_PATH=") + path + " " + SQUALLRUN + " -n 4 " + MACROS_AS_IS + " -p 4", 120);
    if (count_of(r.output, "compile the program with -fPIC") > 0) GTEST_SKIP() << "a sanitizer build refuses it, as it should";
    EXPECT_EQ(r.status, 0) << path << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "macros: ok on 4 processes"), 1) << r.output;
  }
  const auto bad = run(std::string(SQUALLRUN) + " -n 2 " + MACROS_AS_IS + " -p 2 -bad unlock", 60);
  EXPECT_NE(bad.status, 0);
  EXPECT_EQ(count_of(bad.output, "UNLOCK of a lock this process does not hold"), 1) << bad.output;
  EXPECT_EQ(count_of(bad.output, "still running"), 0) << "a node hung on its way out\n" << bad.output;
}

// exit(n) in a worker's function ends the job at once with status n, as it would end a
// threaded program, saying which node exited; so does main's exit(n) while workers run.
// Never a hang (a worker's exit once waited for ever in a collective destructor), never a
// crash, also when built as a plain cc would.
TEST(Parmacs, AnExitEndsTheJobWithItsStatus) {
  const struct {
    const char* program;
    const char* env;
    const char* who;
    int status;
    const char* message;
  } cases[] = {
      {MACROS, "", "worker", 3, "a worker on node 2 exited with status 3; the job ends"},
      {MACROS, "SQUALL_FAULT_PATH=sigbus", "worker", 3, "a worker on node 2 exited with status 3; the job ends"},
      {MACROS_AS_IS, "", "worker", 3, "a worker on node 2 exited with status 3; the job ends"},
      {MACROS, "", "main", 4, "main (node 0) exited with status 4 while 2 worker(s) ran; the job ends"},
      // Workers as threads: one on the last node (of 3 nodes, 6 processes, 2 per node), and
      // main's exit while a worker runs beside it on node 0.
      {MACROS, "SQUALL_WORKERS_PER_NODE=2", "worker", 3, "a worker on node 2 exited with status 3; the job ends"},
      {MACROS, "SQUALL_WORKERS_PER_NODE=2", "main", 4, "main (node 0) exited with status 4 while 5 worker(s) ran; the job ends"},
  };
  for (const auto& c : cases) {
    const bool threads = std::string(c.env).find("PER_NODE=2") != std::string::npos;
    // The cases without workers as threads take the default layout, whatever the suite's.
    const std::string env = threads ? c.env : "env -u SQUALL_WORKERS_PER_NODE " + std::string(c.env);
    const auto r = run(env + " " + SQUALLRUN + " -n 3 " + c.program + " -p " + (threads ? "6" : "3") + " -exit " + c.who);
    if (count_of(r.output, "compile the program with -fPIC") > 0) continue;  // a sanitizer build refuses AS_IS
    EXPECT_FALSE(r.hung) << c.program << " " << c.env << " " << c.who << "\n" << report(r);
    EXPECT_EQ(r.status, c.status) << c.program << " " << c.env << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, c.message), 1) << r.output;
    EXPECT_EQ(count_of(r.output, "went on"), 0) << r.output;
    EXPECT_EQ(count_of(r.output, "signal"), 0) << "a node crashed or had to be killed\n" << r.output;
    std::printf("%s exit: %.1f s\n", c.who, r.seconds);
  }
}

TEST(Parmacs, RunsWithoutSquallrunAsOneNode) {
  const auto r = run(std::string(MACROS) + " -p 1", 60);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "macros: ok on 1 processes"), 1) << r.output;
}

}  // namespace
