// SPDX-License-Identifier: BSD-3-Clause
#include "options.hpp"

#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include <squall/version.hpp>

#include "bootstrap/host_list.hpp"
#include "common/config.hpp"
#include "stats/forms.hpp"
#include "transport/tcp/secret.hpp"

namespace squallrun {

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: squallrun -n N [options] [--] program [args...]\n"
               "Starts N nodes of program on this host, connected by shared memory.\n"
               "Options take their value as -n4, -n 4, --nodes=4 or --nodes 4; options end at the\n"
               "program's name (or at --), and what follows it is the program's own.\n"
               "  -n, --nodes N          number of nodes (1..1024)\n"
               "  --aggregation K        messages per packet (SQUALL_AGGREGATION, 1..4096)\n"
               "  --stats[=FORMS]        counters at finalize (SQUALL_STATS, default 1): 1, one table\n"
               "                         across nodes; nodes, a column per node; json:FILE, all of\n"
               "                         them to FILE; or a comma-separated list (json:FILE last)\n"
               "  --label                prefix each line a node prints (stdout and stderr) with\n"
               "                         '[K] ', K the node (SQUALL_LABEL=1)\n"
               "  --transport shm|tcp|ucx\n"
               "                         how the nodes talk (SQUALL_TRANSPORT, default shm); tcp\n"
               "                         connects every pair over TCP on this host (SQUALL_TCP_ADDR,\n"
               "                         SQUALL_TCP_PORT, SQUALL_TCP_TIMEOUT), ucx over UCX (UCX_TLS\n"
               "                         picks UCX's transports, as for any UCX program)\n"
               "  --ring-bytes B         bytes per shared-memory ring, a power of two\n"
               "                         (SQUALL_RING_BYTES, 65536..1073741824, default 262144)\n"
               "  --grace S              seconds the other nodes get to exit after a node is\n"
               "                         lost before they are killed (SQUALL_GRACE, default 3)\n"
               "  --hosts A,B,...        one job over several hosts (SQUALL_HOSTS): run the same\n"
               "                         command on each host listed (IPv4 addresses); each runs\n"
               "                         N nodes, host k nodes k*N..k*N+N-1; node i listens on its\n"
               "                         host's address, port SQUALL_TCP_PORT+i (default 41000+i);\n"
               "                         every host needs the same SQUALL_JOB_SECRET\n"
               "  --host-index K         which listed host this is (SQUALL_HOST_INDEX; found from\n"
               "                         this machine's addresses when unset)\n"
               "  --make-secret          print a fresh job secret for SQUALL_JOB_SECRET and exit\n"
               "  --version              print squallrun's version and exit\n"
               "  -h, --help             this text\n");
}

std::int64_t int_flag(const std::string& flag, const char* value, std::int64_t min, std::int64_t max) {
  if (value == nullptr) die("%s needs a value", flag.c_str());
  auto v = squall::parse_int(value, min, max);
  if (!v) {
    std::fprintf(stderr, "squallrun: %s must be an integer from %lld to %lld (got '%s')\n", flag.c_str(),
                 static_cast<long long>(min), static_cast<long long>(max), value);
    std::exit(2);
  }
  return *v;
}

std::int64_t int_env(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return int_flag(name, v, min, max);
}

// As squall::env_bool, but a bad value is a usage error of squallrun's, as int_env's are.
bool bool_env(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const auto b = squall::parse_bool(v);
  if (!b) die("%s", (std::string(name) + " must be 0 or 1 (or no/yes, false/true, off/on; got '" + v + "')").c_str());
  return *b;
}

// --hosts: which host this is, and the job's size; the nodes learn the layout from the
// environment (host_layout_from_env).
void spread_over_hosts(options& o, const std::string& hosts, std::int64_t index) {
  std::string error;
  const auto list = squall::boot::parse_host_list(hosts, error);
  if (!list) die("--hosts must list IPv4 addresses separated by commas: %s", error.c_str());
  const auto count = static_cast<std::int64_t>(list->size());
  if (index < 0) {
    index = squall::boot::find_this_host(*list);
    if (index == -1) die("none of the --hosts addresses (%s) belongs to this machine; give --host-index", hosts.c_str());
    if (index == -2) die("several --hosts addresses (%s) belong to this machine; give --host-index", hosts.c_str());
  } else if (index >= count) {
    die("--host-index must be below the number of hosts listed (%s)", hosts.c_str());
  }
  if (count * o.nodes > 1 << 16) die("--hosts times -n makes more than 65536 nodes");
  o.job_nodes = static_cast<int>(count * o.nodes);
  o.first_node = static_cast<int>(index) * o.nodes;
  setenv("SQUALL_HOSTS", hosts.c_str(), 1);
  setenv("SQUALL_NODES_PER_HOST", std::to_string(o.nodes).c_str(), 1);
}

// getopt_long's codes for the options that have no one-letter form.
enum long_only : int { aggregation = 256, ring_bytes, grace, hosts, host_index, make_secret, stats, label, transport, version };

const option long_options[] = {
    {"nodes", required_argument, nullptr, 'n'},
    {"help", no_argument, nullptr, 'h'},
    {"aggregation", required_argument, nullptr, aggregation},
    {"ring-bytes", required_argument, nullptr, ring_bytes},
    {"grace", required_argument, nullptr, grace},
    {"hosts", required_argument, nullptr, hosts},
    {"host-index", required_argument, nullptr, host_index},
    {"make-secret", no_argument, nullptr, make_secret},
    {"stats", optional_argument, nullptr, stats},
    {"label", no_argument, nullptr, label},
    {"transport", required_argument, nullptr, transport},
    {"version", no_argument, nullptr, version},
    {nullptr, 0, nullptr, 0},
};

std::string name_of(int code) {
  if (code == 'n') return "-n";
  for (const option* o = long_options; o->name != nullptr; ++o) {
    if (o->val == code) return std::string("--") + o->name;
  }
  return "-" + std::string(1, static_cast<char>(code));
}

// An option that sets one value, given twice ("-n 2 -n 4"): which value was meant is a guess,
// so neither is taken. Flags (--label) may repeat.
void refuse_twice(int code, const char* value, std::map<int, std::string>& given) {
  bool takes_value = code == 'n';
  for (const option* o = long_options; o->name != nullptr; ++o) takes_value |= o->val == code && o->has_arg != no_argument;
  if (!takes_value) return;
  const std::string text = value != nullptr ? "'" + std::string(value) + "'" : "no value";  // --stats alone
  const auto [first, added] = given.emplace(code, text);
  if (added) return;
  const std::string name = code == 'n' ? "-n/--nodes" : name_of(code);
  die("%s", (name + " is given twice (" + first->second + ", then " + text + "): give it once").c_str());
}

// What the command line sets beyond `options` until every option is read; each value's
// source (the flag, or the variable) names it in a refusal.
struct pending {
  std::optional<std::string> hosts;
  std::string hosts_from = "SQUALL_HOSTS";
  std::int64_t host_index = -1;
  std::string index_from = "SQUALL_HOST_INDEX";
};

// One option; `value` is null when it needs one and none was given.
void apply(int code, const char* value, options& o, pending& p) {
  const std::string name = name_of(code);
  switch (code) {
    case 'h':
      usage(stdout);
      std::exit(0);
    case version:
      std::printf("squallrun (Squall) %s\n", SQUALL_VERSION_STRING);
      std::exit(0);
    case 'n':
      o.nodes = static_cast<int>(int_flag(name, value, 1, 1024));
      break;
    case aggregation:
      setenv("SQUALL_AGGREGATION", std::to_string(int_flag(name, value, 1, 4096)).c_str(), 1);
      break;
    case ring_bytes:
      o.ring_bytes = int_flag(name, value, 1 << 16, 1 << 30);
      break;
    case grace:
      o.grace_s = int_flag(name, value, 0, 3600);
      break;
    case hosts:
      if (value == nullptr) die("--hosts needs a list of IPv4 addresses");
      p.hosts = value;
      p.hosts_from = name;
      break;
    case host_index:
      p.host_index = int_flag(name, value, 0, 1 << 16);
      p.index_from = name;
      break;
    case make_secret:
      std::printf("%s\n", squall::tcp::to_hex(squall::tcp::make_secret()).c_str());
      std::exit(0);
    case stats: {
      // "--stats=" would set SQUALL_STATS empty, which means no statistics: not what was asked.
      if (value != nullptr && *value == '\0') {
        die("--stats= is empty: give the forms after '=' (1, nodes, json:FILE), or --stats alone for 1");
      }
      const char* forms = value != nullptr ? value : "1";
      squall::stats::forms parsed;
      std::string error;  // named once here, not by every node
      if (!squall::stats::parse_forms(forms, parsed, error)) die("--stats: %s", error.c_str());
      setenv("SQUALL_STATS", forms, 1);
      break;
    }
    case label:
      o.label = true;
      break;
    case transport:
      if (value == nullptr ||
          (std::strcmp(value, "shm") != 0 && std::strcmp(value, "tcp") != 0 && std::strcmp(value, "ucx") != 0)) {
        die("--transport must be shm, tcp or ucx");
      }
      setenv("SQUALL_TRANSPORT", value, 1);
      break;
    default:
      break;
  }
}

// getopt_long's '?': an option it does not know, or a value given to one that takes none.
[[noreturn]] void reject(const char* arg) {
  usage(stderr);
  if (optopt >= aggregation || optopt == 'h') die("%s takes no value", name_of(optopt).c_str());
  if (optopt != 0) die("unknown option '%s'", name_of(optopt).c_str());
  die("unknown option '%s'", arg);
}

// An empty list, or a host index without a list, would silently make a job of this host
// alone, while the other hosts wait for it.
void check_hosts_given(const pending& p) {
  if (p.hosts && p.hosts->empty()) {
    die("%s is empty: give the hosts' IPv4 addresses separated by commas (or, for a job on this host alone, "
        "neither --hosts nor SQUALL_HOSTS)",
        p.hosts_from.c_str());
  }
  if (!p.hosts && p.host_index >= 0) {
    die("%s says which host of --hosts (or SQUALL_HOSTS) this is, but no hosts are listed", p.index_from.c_str());
  }
}

}  // namespace

[[noreturn]] void die(const char* fmt, const char* arg) {
  std::fprintf(stderr, "squallrun: ");
  std::fprintf(stderr, fmt, arg);
  std::fprintf(stderr, "\n");
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  o.ring_bytes = int_env("SQUALL_RING_BYTES", 1 << 18, 1 << 16, 1 << 30);
  o.grace_s = int_env("SQUALL_GRACE", 3, 0, 3600);
  o.label = bool_env("SQUALL_LABEL", false);
  pending p;
  const char* hosts_env = std::getenv("SQUALL_HOSTS");
  if (hosts_env != nullptr) p.hosts = hosts_env;
  p.host_index = int_env("SQUALL_HOST_INDEX", -1, 0, 1 << 16);
  // '+': stop at the program's name; ':': report a missing value as ':', without a message.
  opterr = 0;
  std::map<int, std::string> given;  // the options that set a value, as given
  for (int code; (code = getopt_long(argc, argv, "+:hn:", long_options, nullptr)) != -1;) {
    if (code == '?') reject(argv[optind - 1]);
    if (code == ':') {
      apply(optopt, nullptr, o, p);
    } else {
      refuse_twice(code, optarg, given);
      apply(code, optarg, o, p);
    }
  }
  if (o.nodes == 0) {
    usage(stderr);
    die("the number of nodes (-n N) is required");
  }
  if (optind >= argc) {
    usage(stderr);
    die("no program given");
  }
  check_hosts_given(p);
  if ((o.ring_bytes & (o.ring_bytes - 1)) != 0) die("the ring size must be a power of two");
  // The job's secret, which every TCP connection must prove (a user's own is kept).
  const char* secret = std::getenv("SQUALL_JOB_SECRET");
  const bool have_secret = secret != nullptr && *secret != '\0';
  o.job_nodes = o.nodes;
  if (p.hosts) {
    if (!have_secret) {
      die("--hosts needs the same SQUALL_JOB_SECRET on every host (make one with squallrun --make-secret)");
    }
    spread_over_hosts(o, *p.hosts, p.host_index);
  } else if (!have_secret) {
    setenv("SQUALL_JOB_SECRET", squall::tcp::to_hex(squall::tcp::make_secret()).c_str(), 1);
  }
  o.program = argv + optind;
  return o;
}

}  // namespace squallrun
