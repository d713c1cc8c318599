//===- SimulateServingCommand.cpp - `linnet simulate-serving` -------------===//
//
// The serving simulation (planning::simulateServing) from a phase-cost
// table: a scenario in (requests, arrival rate, prompt and output length
// distributions; continuous batching over the table's slots), throughput
// and latency percentiles out, as text and as `linnet.serving-simulation/1`.
//
//===----------------------------------------------------------------------===//
#include "SimulateServingCommand.h"

#include "linnet/Planning/Serving.h"
#include "linnet/Support/AtomicFile.h"

#include <fmt/format.h>

#include <iostream>

using namespace linnet;

namespace {

struct Options {
  std::string costs, output, promptTokens = "fixed:16", newTokens = "fixed:64";
  int64_t requests = 8, maxSeq = 0, pages = 0, pageSize = 0;
  double arrivalRate = 0;
  uint64_t seed = 0;
} gOpts;

} // namespace

CLI::App *tool::addSimulateServingCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand(
      "simulate-serving", "Simulate serving requests with continuous batching from a model's phase costs: "
                          "throughput, time to first token and time per token");
  c->add_option("--costs", gOpts.costs,
                "Phase costs (linnet.phase-costs/1): the prefill entry's time by prompt tokens, the decode "
                "step's by context, and the slots")
      ->required();
  c->add_option("--requests", gOpts.requests, "Requests to serve")->default_val(8)->check(CLI::Range(1, 1000000));
  c->add_option("--arrival-rate", gOpts.arrivalRate,
                "Requests a second, Poisson arrivals (0: every request waiting at the start)")
      ->default_val(0)
      ->check(CLI::Range(0.0, 1e9));
  c->add_option("--prompt-tokens", gOpts.promptTokens, "Prompt lengths: fixed:N, uniform:A:B or list:A,B,...")
      ->default_val("fixed:16");
  c->add_option("--new-tokens", gOpts.newTokens, "Tokens each request generates: fixed:N, uniform:A:B or list:A,B,...")
      ->default_val("fixed:64");
  c->add_option("--max-seq", gOpts.maxSeq, "The model's cache length: a request that does not fit is an error")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  CLI::Option *pages = c->add_option(
      "--pages", gOpts.pages,
      "A paged KV cache of this many pages (as generate --prompts runs one): a request joins when a slot is free "
      "and the pool has the pages its prompt and new tokens need, in arrival order")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  CLI::Option *pageSize = c->add_option("--page-size", gOpts.pageSize, "Positions a page holds (with --pages)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  pages->needs(pageSize);
  pageSize->needs(pages);
  c->add_option("--seed", gOpts.seed, "Seed of the arrivals and the uniform lengths")->default_val(0);
  c->add_option("-o", gOpts.output, "Also write the result as JSON (linnet.serving-simulation/1)");
  return c;
}

int tool::runSimulateServing() {
  planning::PhaseCosts costs;
  try {
    costs = planning::phaseCostsFromJson(planning::readJsonFile(gOpts.costs));
  } catch (const planning::SchemaError &e) {
    std::cerr << fmt::format("linnet simulate-serving: error: {}: {}{}\n", gOpts.costs,
                             e.path.empty() ? "" : e.path + ": ", e.what());
    return 1;
  }
  planning::ServingScenario s;
  s.requests = gOpts.requests;
  s.arrivalRate = gOpts.arrivalRate;
  s.seed = gOpts.seed;
  s.maxSeq = gOpts.maxSeq;
  s.pages = gOpts.pages;
  s.pageSize = gOpts.pageSize;
  std::string why;
  if (!planning::parseLengthDist(gOpts.promptTokens, s.promptTokens, why) ||
      !planning::parseLengthDist(gOpts.newTokens, s.newTokens, why)) {
    std::cerr << "linnet simulate-serving: error: " << why << "\n";
    return 2;
  }
  planning::ServingResult r;
  if (!planning::simulateServing(costs, s, r, why)) {
    std::cerr << "linnet simulate-serving: error: " << why << "\n";
    return 1;
  }
  planning::Json doc = planning::toJson(costs, s, r);
  if (!gOpts.output.empty()) {
    std::string err;
    if (!support::writeFileAtomic(gOpts.output, doc.dump(2) + "\n", err)) {
      std::cerr << fmt::format("linnet simulate-serving: error: cannot write '{}': {}\n", gOpts.output, err);
      return 1;
    }
  }
  auto pct = [&](const char *key) {
    const planning::Json &p = doc[key];
    return fmt::format("p50 {:.1f} ms, p90 {:.1f} ms, p99 {:.1f} ms", p["p50_ms"].get<double>(),
                       p["p90_ms"].get<double>(), p["p99_ms"].get<double>());
  };
  std::cout << fmt::format("{} requests over {} slots{} ({}), prompts {}, new tokens {}; costs: {}\n", s.requests,
                           costs.slots,
                           s.pages > 0 ? fmt::format(", paged KV cache: {} pages of {} positions, at most {} in use",
                                                     s.pages, s.pageSize, r.peakPages)
                                       : "",
                           s.arrivalRate > 0 ? fmt::format("{} requests/s", s.arrivalRate) : "all waiting at 0",
                           s.promptTokens.text, s.newTokens.text, costs.source);
  std::cout << fmt::format("  makespan {:.3f} s: prefill {:.3f} s, decode {:.3f} s ({} steps, {} tokens)\n",
                           r.makespanS, r.prefillS, r.decodeS, r.decodeSteps, r.decodeTokens);
  std::cout << fmt::format("  throughput {:.1f} tokens/s; decode {:.1f} tokens/s\n",
                           doc["throughput_tokens_per_s"].get<double>(), doc["decode_tokens_per_s"].get<double>());
  std::cout << "  time to first token: " << pct("time_to_first_token") << "\n";
  std::cout << "  time per output token: " << pct("time_per_output_token") << "\n";
  std::cout << "  request latency: " << pct("request_latency") << "\n";
  return 0;
}
