// bench/bench_args.h - the one argument parser of the benchmarks, with the CLI's manners: --help prints the usage
// and exits 0 before anything runs; an unknown option, a missing value or a bad number is one `error:` line on
// stderr and exit 2.
//
//   BenchArgs args("otke_bench", "OTKE throughput ...");
//   args.flag("--breakdown", "only the time breakdown", &breakdown);
//   args.option("--config", "NAME", "only this configuration (k128p64, ...)", &config);
//   if (const int rc = args.parse(argc, argv); rc >= 0) return rc;
#pragma once

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace inductive::bench {

class BenchArgs {
 public:
  BenchArgs(std::string program, std::string about) : program_(std::move(program)), about_(std::move(about)) {}

  void flag(const std::string& name, const std::string& help, bool* out) {
    items_.push_back({name, "", help, out, nullptr});
  }
  void option(const std::string& name, const std::string& value_name, const std::string& help, std::string* out) {
    items_.push_back({name, value_name, help, nullptr, out});
  }
  // Optional positional arguments, in order.
  void positional(const std::string& name, const std::string& help, std::string* out) {
    positionals_.push_back({name, "", help, nullptr, out});
  }

  // -1: go on; otherwise the exit code main should return (0 after --help, 2 after an error).
  int parse(int argc, char** argv) const {
    size_t next_positional = 0;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        usage();
        return 0;
      }
      if (a.rfind("--", 0) == 0) {
        std::string value;
        const size_t eq = a.find('=');
        const bool inline_value = eq != std::string::npos;
        if (inline_value) {
          value = a.substr(eq + 1);
          a = a.substr(0, eq);
        }
        const Item* item = find(a);
        if (!item) return error("unknown option " + a + " (see --help)");
        if (item->flag) {
          if (inline_value) return error(a + " takes no value");
          *item->flag = true;
          continue;
        }
        if (!inline_value) {
          if (i + 1 >= argc) return error(a + " needs a value: " + item->value_name);
          value = argv[++i];
        }
        *item->value = value;
        continue;
      }
      if (next_positional >= positionals_.size()) return error("unexpected argument '" + a + "' (see --help)");
      *positionals_[next_positional++].value = a;
    }
    return -1;
  }

  // "1,2" -> {1, 2}; false (after an error line) when an entry is not an integer in [lo, hi].
  static bool int_list(const std::string& option, const std::string& text, int lo, int hi, std::vector<int>* out) {
    out->clear();
    std::stringstream ss(text);
    for (std::string t; std::getline(ss, t, ',');) {
      size_t used = 0;
      int v = 0;
      try {
        v = std::stoi(t, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != t.size() || t.empty() || v < lo || v > hi) {
        std::fprintf(stderr, "error: %s: '%s' is not an integer in [%d, %d]\n", option.c_str(), t.c_str(), lo, hi);
        return false;
      }
      out->push_back(v);
    }
    return !out->empty();
  }

 private:
  struct Item {
    std::string name, value_name, help;
    bool* flag;
    std::string* value;
  };

  const Item* find(const std::string& name) const {
    for (const Item& it : items_)
      if (it.name == name) return &it;
    return nullptr;
  }

  int error(const std::string& message) const {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 2;
  }

  void usage() const {
    std::printf("%s: %s\n\nUsage: %s [OPTIONS]", program_.c_str(), about_.c_str(), program_.c_str());
    for (const Item& p : positionals_) std::printf(" [%s]", p.name.c_str());
    std::printf("\n\nOptions:\n  --help  this text\n");
    for (const Item& it : items_) {
      const std::string left = it.name + (it.flag ? "" : " " + it.value_name);
      std::printf("  %-22s %s\n", left.c_str(), it.help.c_str());
    }
    for (const Item& p : positionals_) std::printf("  %-22s %s\n", p.name.c_str(), p.help.c_str());
  }

  std::string program_, about_;
  std::vector<Item> items_, positionals_;
};

}  // namespace inductive::bench
