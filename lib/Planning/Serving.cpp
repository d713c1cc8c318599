//===- Serving.cpp - Serving simulation from phase costs ------------------===//
//
// A discrete-event simulation of continuous batching (Serving.h). It runs
// the engine loop `linnet generate --prompts` runs: fill the free slots
// with waiting requests (one prefill each; with a paged cache, while the
// pool has the next one's pages), then one decode step for all slots; so a
// simulation with measured phase costs is checked against a
// measured generate run (bench/llama/serving.sh).
//
//===----------------------------------------------------------------------===//
#include "linnet/Planning/Serving.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <random>

namespace linnet::planning {

namespace {

constexpr const char *kCostsSchema = "linnet.phase-costs/1";
constexpr const char *kSimulationSchema = "linnet.serving-simulation/1";

std::vector<std::pair<int64_t, double>> readPoints(ObjReader &r, const char *key, const char *what) {
  std::vector<std::pair<int64_t, double>> pts;
  r.each(key, [&](const Json &e, const std::string &path) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number())
      throw SchemaError(path, std::string("expected a point [") + what + ", ns]");
    int64_t x = e[0].get<int64_t>();
    double y = e[1].get<double>();
    if (x < 0 || !(y > 0) || !std::isfinite(y))
      throw SchemaError(path, std::string("expected ") + what + " >= 0 and a positive, finite time");
    if (!pts.empty() && x <= pts.back().first)
      throw SchemaError(path, std::string("points must be in increasing ") + what);
    pts.push_back({x, y});
  });
  if (pts.empty())
    throw SchemaError(r.at(key), "expected at least one point");
  return pts;
}

/// Linear between points, the last segment's slope beyond them (the first
/// point's value alone when there is one), never below zero.
double interpolate(const std::vector<std::pair<int64_t, double>> &pts, double x) {
  if (pts.size() == 1)
    return pts[0].second;
  size_t i = 1;
  while (i + 1 < pts.size() && x > double(pts[i].first))
    ++i;
  const auto &[x0, y0] = pts[i - 1];
  const auto &[x1, y1] = pts[i];
  return std::max(0.0, y0 + (y1 - y0) * (x - double(x0)) / double(x1 - x0));
}

} // namespace

PhaseCosts phaseCostsFromJson(const Json &j) {
  ObjReader r(j, "");
  if (r.str("schema") != kCostsSchema)
    throw SchemaError("/schema", std::string("expected \"") + kCostsSchema + "\"");
  PhaseCosts c;
  c.source = r.str("source");
  ObjReader p = r.obj("prefill");
  c.prefillEntry = p.str("entry");
  c.prefill = readPoints(p, "points", "tokens");
  p.done();
  ObjReader d = r.obj("decode");
  c.decodeEntry = d.str("entry");
  c.slots = d.i64("slots");
  if (c.slots < 1)
    throw SchemaError("/decode/slots", "expected at least 1 slot");
  c.decode = readPoints(d, "points", "context");
  d.done();
  r.done();
  return c;
}

Json toJson(const PhaseCosts &c) {
  auto pts = [](const std::vector<std::pair<int64_t, double>> &v) {
    Json a = Json::array();
    for (const auto &[x, y] : v)
      a.push_back({x, y});
    return a;
  };
  return {{"schema", kCostsSchema},
          {"source", c.source},
          {"prefill", {{"entry", c.prefillEntry}, {"points", pts(c.prefill)}}},
          {"decode", {{"entry", c.decodeEntry}, {"slots", c.slots}, {"points", pts(c.decode)}}}};
}

bool parseLengthDist(const std::string &spec, LengthDist &out, std::string &why) {
  out = {};
  out.text = spec;
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon), rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  char sep = kind == "list" ? ',' : ':';
  for (size_t at = 0; colon != std::string::npos && at <= rest.size();) {
    size_t end = rest.find(sep, at);
    if (end == std::string::npos)
      end = rest.size();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(rest.data() + at, rest.data() + end, v);
    if (ec != std::errc() || p != rest.data() + end || v < 1) {
      why = "'" + spec + "': '" + rest.substr(at, end - at) + "' is not a positive integer";
      return false;
    }
    out.values.push_back(v);
    at = end + 1;
  }
  if (kind == "fixed" && out.values.size() == 1)
    out.kind = LengthDist::Kind::Fixed;
  else if (kind == "uniform" && out.values.size() == 2 && out.values[0] <= out.values[1])
    out.kind = LengthDist::Kind::Uniform;
  else if (kind == "list" && !out.values.empty())
    out.kind = LengthDist::Kind::List;
  else {
    why = "'" + spec + "': expected fixed:N, uniform:A:B (A <= B) or list:A,B,...";
    return false;
  }
  return true;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  double rank = p / 100 * double(v.size() - 1);
  size_t lo = size_t(std::floor(rank)), hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - double(lo));
}

int64_t pagesForRequest(int64_t promptTokens, int64_t newTokens, int64_t pageSize) {
  int64_t positions = promptTokens + std::max<int64_t>(newTokens - 1, 0);
  return (positions + pageSize - 1) / pageSize;
}

bool simulateServing(const PhaseCosts &costs, const ServingScenario &s, ServingResult &out, std::string &why) {
  out = {};
  std::mt19937_64 rng(s.seed);
  auto draw = [&](const LengthDist &d, int64_t i) -> int64_t {
    switch (d.kind) {
    case LengthDist::Kind::Fixed: return d.values[0];
    case LengthDist::Kind::List: return d.values[size_t(i) % d.values.size()];
    case LengthDist::Kind::Uniform:
      return std::uniform_int_distribution<int64_t>(d.values[0], d.values[1])(rng);
    }
    return 1;
  };
  if ((s.pages > 0) != (s.pageSize > 0) || s.pages < 0 || s.pageSize < 0) {
    why = "a paged cache takes both its pages and their size (positive)";
    return false;
  }
  auto pagesOf = [&](const RequestTiming &r) {
    return s.pageSize > 0 ? pagesForRequest(r.prompt, r.generated, s.pageSize) : 0;
  };
  // Arrivals first (exponential gaps at the rate), then the lengths.
  std::vector<RequestTiming> reqs(size_t(s.requests));
  double t = 0;
  std::exponential_distribution<double> gap(s.arrivalRate > 0 ? s.arrivalRate : 1);
  for (int64_t i = 0; i < s.requests; ++i) {
    if (s.arrivalRate > 0 && i > 0)
      t += gap(rng);
    reqs[size_t(i)] = {i, 0, 0, s.arrivalRate > 0 ? t : 0.0, 0, 0};
  }
  for (int64_t i = 0; i < s.requests; ++i) {
    RequestTiming &r = reqs[size_t(i)];
    r.prompt = draw(s.promptTokens, i);
    r.generated = draw(s.newTokens, i);
    if (s.pages > 0 && pagesOf(r) > s.pages) {
      why = "request " + std::to_string(i) + ": " + std::to_string(r.prompt) + " prompt tokens and " +
            std::to_string(r.generated) + " new ones need " + std::to_string(pagesOf(r)) + " pages of " +
            std::to_string(s.pageSize) + " positions; the pool has " + std::to_string(s.pages);
      return false;
    }
    if (s.pages == 0 && s.maxSeq > 0 && r.prompt + r.generated - 1 > s.maxSeq) {
      why = "request " + std::to_string(i) + ": " + std::to_string(r.prompt) + " prompt tokens and " +
            std::to_string(r.generated) + " new ones do not fit the cache of " + std::to_string(s.maxSeq);
      return false;
    }
  }

  // The engine: slots hold live requests (their index, and their tokens).
  struct Slot {
    int64_t req = -1, held = 0, made = 0;
  };
  std::vector<Slot> slots(size_t(costs.slots));
  int64_t freePages = s.pages;
  size_t next = 0, done = 0;
  double now = 0;
  std::deque<size_t> waiting;
  auto admit = [&]() {
    while (next < reqs.size() && reqs[next].arrivalS <= now)
      waiting.push_back(next++);
  };
  while (done < reqs.size()) {
    admit();
    // Every free slot takes a waiting request: its prefill gives its first
    // token (a request of one token is done at once).
    for (Slot &sl : slots)
      while (sl.req < 0 && !waiting.empty() && pagesOf(reqs[waiting.front()]) <= freePages) {
        RequestTiming &r = reqs[waiting.front()];
        waiting.pop_front();
        freePages -= pagesOf(r);
        out.peakPages = std::max(out.peakPages, s.pages - freePages);
        double dt = interpolate(costs.prefill, double(r.prompt)) * 1e-9;
        now += dt;
        out.prefillS += dt;
        r.firstTokenS = now;
        ++out.tokens;
        if (r.generated <= 1) {
          r.doneS = now;
          ++done;
          freePages += pagesOf(r);
          admit();
          continue;
        }
        sl = {r.id, r.prompt + 1, 1};
        admit();
      }
    int64_t live = 0, context = 0;
    for (const Slot &sl : slots)
      if (sl.req >= 0) {
        ++live;
        context += sl.held;
      }
    if (!live) {
      if (next < reqs.size() && waiting.empty())
        now = std::max(now, reqs[next].arrivalS); // idle until the next arrival
      continue;
    }
    // One step: every slot one token (its cost at the live sequences' mean
    // context: each reads its own keys).
    double dt = interpolate(costs.decode, double(context) / double(live)) * 1e-9;
    now += dt;
    out.decodeS += dt;
    ++out.decodeSteps;
    for (Slot &sl : slots) {
      if (sl.req < 0)
        continue;
      ++sl.held;
      ++sl.made;
      ++out.decodeTokens;
      ++out.tokens;
      RequestTiming &r = reqs[size_t(sl.req)];
      if (sl.made >= r.generated) {
        r.doneS = now;
        ++done;
        freePages += pagesOf(r);
        sl = {};
      }
    }
  }
  out.makespanS = now;
  out.requests = std::move(reqs);
  return true;
}

Json toJson(const PhaseCosts &c, const ServingScenario &s, const ServingResult &r) {
  std::vector<double> ttft, tpot, latency;
  for (const RequestTiming &q : r.requests) {
    ttft.push_back(q.firstTokenS - q.arrivalS);
    latency.push_back(q.doneS - q.arrivalS);
    if (q.generated > 1)
      tpot.push_back((q.doneS - q.firstTokenS) / double(q.generated - 1));
  }
  auto pcts = [](const std::vector<double> &v) {
    return Json{{"p50_ms", percentile(v, 50) * 1e3}, {"p90_ms", percentile(v, 90) * 1e3},
                {"p99_ms", percentile(v, 99) * 1e3}, {"max_ms", percentile(v, 100) * 1e3}};
  };
  Json doc = {{"schema", kSimulationSchema},
          {"costs", c.source},
          {"scenario",
           {{"requests", s.requests},
            {"arrival_rate_per_s", s.arrivalRate},
            {"prompt_tokens", s.promptTokens.text},
            {"new_tokens", s.newTokens.text},
            {"seed", s.seed},
            {"slots", c.slots}}},
          {"makespan_s", r.makespanS},
          {"prefill_s", r.prefillS},
          {"decode_s", r.decodeS},
          {"decode_steps", r.decodeSteps},
          {"decode_tokens", r.decodeTokens},
          {"tokens", r.tokens},
          {"throughput_tokens_per_s", r.makespanS > 0 ? double(r.tokens) / r.makespanS : 0.0},
          {"decode_tokens_per_s", r.decodeS > 0 ? double(r.decodeTokens) / r.decodeS : 0.0},
          {"time_to_first_token", pcts(ttft)},
          {"time_per_output_token", pcts(tpot)},
          {"request_latency", pcts(latency)}};
  if (s.pages > 0) {
    doc["scenario"]["pages"] = s.pages;
    doc["scenario"]["page_size"] = s.pageSize;
    doc["peak_pages"] = r.peakPages;
  }
  return doc;
}

} // namespace linnet::planning
