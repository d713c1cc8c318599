//===- Serving.h - Serving simulation from phase costs ----------*- C++ -*-===//
//
// Seed 002's serving simulation: requests arrive, each runs its prompt
// through a prefill phase and then decodes one token a step with the other
// live requests (continuous batching over a model's cache slots or a paged
// KV cache, as `linnet generate --prompts` runs them), and the simulation says what a
// deployment gives: throughput, and time to first token and time per token
// by percentile. The time of each phase comes from a phase-cost table
// (`linnet.phase-costs/1`): points of the prefill entry's call time by
// prompt length and of the decode step's time by context, measured
// (`linnet profile`) or predicted (phase plans by length, `--emit phases
// --at`), interpolated linearly between points and extended along the last
// segment beyond them.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_SERVING_H
#define LINNET_PLANNING_SERVING_H

#include "linnet/Planning/Common.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace linnet::planning {

/// `linnet.phase-costs/1`.
struct PhaseCosts {
  std::string source; // where the points come from, in words
  /// The prefill entry (one prompt into a free slot): (tokens, ns).
  std::string prefillEntry;
  std::vector<std::pair<int64_t, double>> prefill;
  /// The decode step (one token for every slot): (context, ns), the
  /// context being the mean number of tokens the live sequences hold.
  std::string decodeEntry;
  int64_t slots = 1;
  std::vector<std::pair<int64_t, double>> decode;
};
PhaseCosts phaseCostsFromJson(const Json &j);
Json toJson(const PhaseCosts &c);

/// A length distribution: `fixed:N`, `uniform:A:B` (inclusive) or
/// `list:A,B,...` (request i takes element i modulo its size).
struct LengthDist {
  enum class Kind { Fixed, Uniform, List } kind = Kind::Fixed;
  std::vector<int64_t> values;
  std::string text;
};
/// Parses `spec`; false with `why` on a malformed one.
bool parseLengthDist(const std::string &spec, LengthDist &out, std::string &why);

struct ServingScenario {
  int64_t requests = 8;
  /// Requests a second (Poisson arrivals); 0: every request at time 0.
  double arrivalRate = 0;
  LengthDist promptTokens, newTokens;
  uint64_t seed = 0;
  /// The model's cache length: a request whose prompt and new tokens do
  /// not fit is refused.
  int64_t maxSeq = 0;
  /// A paged KV cache (`generate --prompts --kv-cache paged`): a pool of
  /// `pages` pages of `pageSize` positions (0: cache slots). A request joins
  /// when a slot is free and the pool has the pages its positions need, in
  /// arrival order, and gives them back when it ends.
  int64_t pages = 0, pageSize = 0;
};

struct RequestTiming {
  int64_t id, prompt, generated;
  double arrivalS, firstTokenS, doneS;
};

struct ServingResult {
  std::vector<RequestTiming> requests;
  double makespanS = 0, prefillS = 0, decodeS = 0;
  int64_t decodeSteps = 0, decodeTokens = 0, tokens = 0;
  int64_t peakPages = 0; // a paged cache: the most pages held at once
};

/// The pages of `pageSize` positions a request holds in a paged KV cache
/// from its prefill to its end: its prompt and every token fed back
/// (`linnet generate --prompts` reserves them so, and the simulation).
int64_t pagesForRequest(int64_t promptTokens, int64_t newTokens, int64_t pageSize);

/// Runs the scenario: arrivals in order; whenever a slot is free and a
/// request waits (and, with a paged cache, the pool has its pages), its
/// prefill runs (the engine does one thing at a time)
/// and gives its first token; otherwise one decode step advances every live
/// request one token, and a request that has its tokens frees its slot at
/// once. False with `why` when a request cannot be served.
bool simulateServing(const PhaseCosts &costs, const ServingScenario &s, ServingResult &out, std::string &why);

/// The percentile (0-100) of `v` by linear interpolation between ranks.
double percentile(std::vector<double> v, double p);

/// The result as `linnet.serving-simulation/1`: the scenario, totals,
/// throughput and the percentiles of time to first token and time per
/// output token.
Json toJson(const PhaseCosts &c, const ServingScenario &s, const ServingResult &r);

} // namespace linnet::planning

#endif // LINNET_PLANNING_SERVING_H
