//===- GenerateCommand.cpp - `linnet generate` ----------------------------===//
//
// Greedy decoding with a model that has the entries
//   prefill(tokens: Tensor[S; i64]) -> Tensor[S, Vocab; T]
//   decode(token: Tensor[1; i64], pos: i64) -> Tensor[1, Vocab; T]
// and, where the model has it, prefill_last(tokens) -> Tensor[1, Vocab; T]
// (the last position's logits only), which the prompt then runs instead.
// The KV cache is the model's state: prefill fills it from position 0,
// each decode appends one position. Its length is what the entries declare
// (`where S <= MaxSeq`, `where pos < MaxSeq`): every position a run needs
// is checked against it before anything runs.
//
//===----------------------------------------------------------------------===//
#include "GenerateCommand.h"

#include "ArtifactCache.h"
#include "InterpretRun.h"
#include "RunCommand.h"

#include "linnet/Interp/Interpreter.h"

#include "linnet/Planning/Serving.h"
#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/Runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <cstring>
#include <iostream>
#include <sstream>

using namespace linnet;

namespace {
struct Options {
  std::string model, weights, binding, prompt, prompts, kvCache = "auto";
  unsigned maxNewTokens = 16;
  bool interpret = false;
  tool::SourceOptions source;
} gOpts;

/// Index of the largest logit in row `row` of a [rows, vocab] result.
int64_t argmaxRow(const rt::OwnedTensor &logits, int64_t row) {
  int64_t vocab = logits.shape.back();
  int64_t best = 0;
  auto at = [&](int64_t i) -> double {
    size_t k = static_cast<size_t>(row * vocab + i);
    if (logits.dtype == rt::DType::F64) {
      double v;
      std::memcpy(&v, logits.data.data() + k * 8, 8);
      return v;
    }
    float v;
    std::memcpy(&v, logits.data.data() + k * 4, 4);
    return v;
  };
  double bestV = at(0);
  for (int64_t i = 1; i < vocab; ++i)
    if (double v = at(i); v > bestV) {
      bestV = v;
      best = i;
    }
  return best;
}

/// Token ids like 1,2,3; nullopt (with `bad` the offending piece) when a
/// piece is not an integer.
std::optional<std::vector<int64_t>> parseTokens(const std::string &text, std::string &bad) {
  std::vector<int64_t> ids;
  std::stringstream ss(text);
  for (std::string tok; std::getline(ss, tok, ',');) {
    try {
      size_t used = 0;
      ids.push_back(std::stoll(tok, &used));
      if (used != tok.size())
        throw std::invalid_argument(tok);
    } catch (const std::exception &) {
      bad = tok;
      return std::nullopt;
    }
  }
  return ids;
}

rt::OwnedTensor i64Tensor(std::vector<int64_t> shape, const std::vector<int64_t> &values) {
  rt::OwnedTensor t;
  t.dtype = rt::DType::I64;
  t.shape = std::move(shape);
  t.data.resize(values.size() * 8);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}
using HasEntry = std::function<bool(const std::string &)>;
using CallEntry = std::function<bool(const std::string &, const std::vector<rt::TensorView> &,
                                     std::vector<rt::OwnedTensor> &, std::string &)>;
using CheckEntry = std::function<bool(const std::string &, const std::vector<rt::TensorView> &, std::string &)>;

/// How a continuous batch holds its sequences' keys and values (cache
/// slots, or a paged pool): its rows, its entries and their inputs beside
/// the tokens, and what a sequence takes when it joins and gives back when
/// it ends. runBatch is the engine loop either way.
struct BatchCache {
  int64_t rows = 0;
  std::string prefillEntry, decodeEntry, rowWord;
  /// Takes what prompt i needs in row c; false: it waits.
  std::function<bool(size_t i, int64_t c)> admit = [](size_t, int64_t) { return true; };
  std::function<void(int64_t c)> release = [](int64_t) {};
  /// The prefill's inputs after the tokens (into row c); the decode's after
  /// the tokens and the positions.
  std::function<std::vector<rt::OwnedTensor>(int64_t c)> prefillInputs;
  std::function<std::vector<rt::OwnedTensor>()> decodeInputs = [] { return std::vector<rt::OwnedTensor>{}; };
  /// "3 slots", "3 rows, paged KV cache: ...", for the summary line.
  std::function<std::string()> describe;
};

/// `--prompts`: continuous batching. Each prompt runs the prefill entry
/// into a free row; the decode entry then advances every row by one token
/// a call; a sequence that has its tokens leaves its row, which the next
/// prompt takes at once (when the cache admits it). A row without a
/// sequence decodes on what it holds and its logits are not read. Greedy,
/// as `--prompt`: each sequence gets the tokens it gets alone.
int runBatch(const std::vector<std::vector<int64_t>> &prompts, BatchCache &cache, const CallEntry &call) {
  using clock = std::chrono::steady_clock;
  const int64_t rows = cache.rows, maxNew = gOpts.maxNewTokens;
  std::vector<std::vector<int64_t>> outputs(prompts.size());
  std::vector<int64_t> owner(rows, -1), pos(rows, 0), last(rows, 0);
  size_t next = 0, done = 0;
  double prefillS = 0, decodeS = 0;
  int64_t prefillTokens = 0, decodeTokens = 0, steps = 0;
  std::vector<rt::OwnedTensor> out;
  std::string error;
  auto leave = [&](int64_t c) {
    cache.release(c);
    owner[c] = -1;
    pos[c] = 0;
    last[c] = 0;
  };
  // Runs prompts into free rows, in order, until the rows or the prompts
  // run out or the next prompt must wait; a sequence that is done after its
  // prompt (--max-new-tokens 0 or 1) frees its row at once.
  auto fill = [&]() -> bool {
    for (int64_t c = 0; c < rows; ++c)
      while (owner[c] < 0 && next < prompts.size() && cache.admit(next, c)) {
        size_t i = next++;
        std::vector<rt::OwnedTensor> in{i64Tensor({int64_t(prompts[i].size())}, prompts[i])};
        for (rt::OwnedTensor &t : cache.prefillInputs(c))
          in.push_back(std::move(t));
        std::vector<rt::TensorView> views;
        for (const rt::OwnedTensor &t : in)
          views.push_back(t.view());
        auto t0 = clock::now();
        if (!call(cache.prefillEntry, views, out, error)) {
          std::cerr << fmt::format("linnet generate: error: {} of prompt {} into {} {}: {}\n", cache.prefillEntry,
                                   i + 1, cache.rowWord, c, error);
          return false;
        }
        prefillS += std::chrono::duration<double>(clock::now() - t0).count();
        prefillTokens += int64_t(prompts[i].size());
        if (maxNew > 0)
          outputs[i].push_back(argmaxRow(out[0], 0));
        if (int64_t(outputs[i].size()) >= maxNew) {
          ++done;
          leave(c);
          continue;
        }
        owner[c] = int64_t(i);
        pos[c] = int64_t(prompts[i].size());
        last[c] = outputs[i].back();
      }
    return true;
  };
  if (!fill())
    return 1;
  while (done < prompts.size()) {
    std::vector<rt::OwnedTensor> in{i64Tensor({rows}, last), i64Tensor({rows}, pos)};
    for (rt::OwnedTensor &t : cache.decodeInputs())
      in.push_back(std::move(t));
    std::vector<rt::TensorView> views;
    for (const rt::OwnedTensor &t : in)
      views.push_back(t.view());
    auto t0 = clock::now();
    if (!call(cache.decodeEntry, views, out, error)) {
      std::cerr << "linnet generate: error: " << cache.decodeEntry << ": " << error << "\n";
      return 1;
    }
    decodeS += std::chrono::duration<double>(clock::now() - t0).count();
    ++steps;
    for (int64_t c = 0; c < rows; ++c) {
      if (owner[c] < 0)
        continue;
      std::vector<int64_t> &o = outputs[owner[c]];
      o.push_back(argmaxRow(out[0], c));
      ++decodeTokens;
      ++pos[c];
      last[c] = o.back();
      if (int64_t(o.size()) >= maxNew) {
        ++done;
        leave(c);
      }
    }
    if (!fill())
      return 1;
  }
  for (const std::vector<int64_t> &o : outputs)
    std::cout << fmt::format("{}\n", fmt::join(o, ","));
  std::cerr << fmt::format("prompts: {} over {}; prefill: {} tokens in {:.3f} s; decode: {} tokens in {} "
                           "steps, {:.3f} s, {:.1f} tokens/s\n",
                           prompts.size(), cache.describe(), prefillTokens, prefillS, decodeTokens, steps, decodeS,
                           decodeS > 0 ? double(decodeTokens) / decodeS : 0.0);
  return 0;
}

/// The largest value in [lo, hi] that `fits` accepts, `fits` monotone and
/// true at lo; lo - 1 when it is not.
int64_t largestFitting(int64_t lo, int64_t hi, const std::function<bool(int64_t)> &fits) {
  if (!fits(lo))
    return lo - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// `--prompts` over a paged KV cache (`prefill_paged`, `decode_paged`):
/// the cache is one pool of pages, and row c of the block table names the
/// pages of the sequence in row c. A prompt joins when a row is free and
/// the pool has the pages its prompt and new tokens need (taken lowest
/// first, in prompt order); a sequence that has its tokens frees them. A
/// row without a sequence has no pages (-1) and writes nothing.
int generatePaged(const std::vector<std::vector<int64_t>> &prompts, const CallEntry &call,
                  const CheckEntry &check) {
  std::string why;
  // The geometry, from what the entries accept: rows (the batch), the
  // page size (positions one block of the table holds) and the pages.
  auto probe = [&](int64_t rows, int64_t pos, int64_t page) {
    rt::OwnedTensor t = i64Tensor({rows}, std::vector<int64_t>(rows, 0));
    rt::OwnedTensor p = i64Tensor({rows}, std::vector<int64_t>(rows, pos));
    rt::OwnedTensor tb = i64Tensor({rows, 1}, std::vector<int64_t>(rows, page));
    return check("decode_paged", {t.view(), p.view(), tb.view()}, why);
  };
  int64_t rows = 0;
  for (int64_t n = 1; n <= 4096 && !rows; ++n)
    if (probe(n, 0, 0))
      rows = n;
  if (!rows) {
    std::cerr << "linnet generate: error: entry 'decode_paged' takes no batch of 1 to 4096 rows with a block "
                 "table of one page: "
              << why << "\n";
    return 1;
  }
  const int64_t page = largestFitting(0, int64_t(1) << 40, [&](int64_t pos) { return probe(rows, pos, 0); }) + 1;
  const int64_t pages = largestFitting(0, int64_t(1) << 40, [&](int64_t pg) { return probe(rows, 0, pg); }) + 1;
  if (page > (int64_t(1) << 40) || pages > (int64_t(1) << 40)) {
    std::cerr << "linnet generate: error: entry 'decode_paged' declares no bound on its positions "
                 "(`where pos < B * Page`) or its pages (`where table < Pages`)\n";
    return 1;
  }
  const int64_t maxNew = gOpts.maxNewTokens;
  auto need = [&](size_t i) { return planning::pagesForRequest(int64_t(prompts[i].size()), maxNew, page); };
  int64_t width = 1;
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (need(i) > pages) {
      std::cerr << fmt::format("linnet generate: error: {}:{}: the prompt's {} tokens and --max-new-tokens {} "
                               "need {} pages of {} positions; the KV cache's pool has {}\n",
                               gOpts.prompts, i + 1, prompts[i].size(), maxNew, need(i), page, pages);
      return 1;
    }
    width = std::max(width, need(i));
  }

  std::vector<int64_t> table(rows * width, -1);
  std::vector<std::vector<int64_t>> held(rows);
  std::vector<int64_t> freePages; // a stack: the lowest page on top
  for (int64_t p = pages - 1; p >= 0; --p)
    freePages.push_back(p);
  int64_t peakPages = 0;
  BatchCache cache;
  cache.rows = rows;
  cache.prefillEntry = "prefill_paged";
  cache.decodeEntry = "decode_paged";
  cache.rowWord = "row";
  cache.admit = [&](size_t i, int64_t c) {
    if (need(i) > int64_t(freePages.size()))
      return false;
    for (int64_t b = 0; b < need(i); ++b) {
      held[c].push_back(freePages.back());
      table[c * width + b] = freePages.back();
      freePages.pop_back();
    }
    peakPages = std::max(peakPages, pages - int64_t(freePages.size()));
    return true;
  };
  cache.release = [&](int64_t c) {
    freePages.insert(freePages.end(), held[c].begin(), held[c].end());
    std::sort(freePages.begin(), freePages.end(), std::greater<int64_t>());
    held[c].clear();
    std::fill(table.begin() + c * width, table.begin() + (c + 1) * width, -1);
  };
  cache.prefillInputs = [&](int64_t c) {
    std::vector<rt::OwnedTensor> in;
    in.push_back(i64Tensor({rows, width}, table));
    in.push_back(i64Tensor({}, {c}));
    return in;
  };
  cache.decodeInputs = [&] {
    std::vector<rt::OwnedTensor> in;
    in.push_back(i64Tensor({rows, width}, table));
    return in;
  };
  cache.describe = [&] {
    return fmt::format("{} rows, paged KV cache: {} pages of {} positions, at most {} in use", rows, pages, page,
                       peakPages);
  };
  return runBatch(prompts, cache, call);
}

/// `--prompts` over the model's cache slots (`prefill_slot`,
/// `decode_batch`), or its paged KV cache where it has one (generatePaged).
int generateBatched(const std::vector<std::vector<int64_t>> &prompts, const HasEntry &hasEntry,
                    const CallEntry &call, const CheckEntry &check) {
  bool paged = hasEntry("prefill_paged") && hasEntry("decode_paged");
  if (gOpts.kvCache == "paged" && !paged) {
    std::cerr << "linnet generate: error: --kv-cache paged needs the model's 'prefill_paged' and 'decode_paged' "
                 "entries (examples/llama.ln has them)\n";
    return 1;
  }
  if (paged && gOpts.kvCache != "slots")
    return generatePaged(prompts, call, check);
  for (const char *e : {"prefill_slot", "decode_batch", "decode"})
    if (!hasEntry(e)) {
      std::cerr << fmt::format("linnet generate: error: --prompts needs the model's '{}' entry (continuous "
                               "batching runs prefill_slot and decode_batch over the KV cache's slots, and "
                               "checks positions against decode's bound; examples/llama.ln has them)\n",
                               e);
      return 1;
    }
  // The slot count: the one batch decode_batch takes.
  std::string why;
  int64_t slots = 0;
  for (int64_t n = 1; n <= 4096 && !slots; ++n) {
    rt::OwnedTensor t = i64Tensor({n}, std::vector<int64_t>(n, 0)), p = i64Tensor({n}, std::vector<int64_t>(n, 0));
    if (check("decode_batch", {t.view(), p.view()}, why))
      slots = n;
  }
  if (!slots) {
    std::cerr << "linnet generate: error: entry 'decode_batch' takes no batch of 1 to 4096 tokens and positions\n";
    return 1;
  }
  const int64_t maxNew = gOpts.maxNewTokens;
  // Every prompt and every position it decodes fit the cache: refused
  // before anything runs, naming the prompt.
  for (size_t i = 0; i < prompts.size(); ++i) {
    rt::OwnedTensor t = i64Tensor({int64_t(prompts[i].size())}, prompts[i]), s = i64Tensor({}, {0});
    std::string error;
    if (!check("prefill_slot", {t.view(), s.view()}, error)) {
      std::cerr << fmt::format("linnet generate: error: {}:{}: the prompt's {} tokens do not fit the model: {}\n",
                               gOpts.prompts, i + 1, prompts[i].size(), error);
      return 1;
    }
    int64_t last = int64_t(prompts[i].size()) + maxNew - 2;
    rt::OwnedTensor tok = i64Tensor({1}, {0}), p = i64Tensor({}, {last});
    if (maxNew > 1 && !check("decode", {tok.view(), p.view()}, error)) {
      std::cerr << fmt::format("linnet generate: error: {}:{}: --max-new-tokens {} after a prompt of {} tokens "
                               "decodes up to position {}, past the model's KV cache: {}\n",
                               gOpts.prompts, i + 1, maxNew, prompts[i].size(), last, error);
      return 1;
    }
  }

  BatchCache cache;
  cache.rows = slots;
  cache.prefillEntry = "prefill_slot";
  cache.decodeEntry = "decode_batch";
  cache.rowWord = "slot";
  cache.prefillInputs = [](int64_t c) {
    std::vector<rt::OwnedTensor> in;
    in.push_back(i64Tensor({}, {c}));
    return in;
  };
  cache.describe = [&] { return fmt::format("{} slots", slots); };
  return runBatch(prompts, cache, call);
}
} // namespace

CLI::App *tool::addGenerateCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand(
      "generate", "Greedy token generation with a model's prefill and decode entries");
  c->add_option("model", gOpts.model, "Artifact directory (from linnet build), or a .ln model "
                                      "(built into the cache first)")
      ->required();
  tool::addSourceOptions(c, gOpts.source);
  c->add_option("--weights", gOpts.weights, "Weights (.safetensors)")->required();
  c->add_option("--binding", gOpts.binding, "Binding manifest");
  CLI::Option *one = c->add_option("--prompt", gOpts.prompt, "Prompt token ids: 1,2,3");
  CLI::Option *many = c->add_option(
      "--prompts", gOpts.prompts,
      "A file of prompts, one per line (token ids 1,2,3): generated with continuous batching through the "
      "model's prefill_slot and decode_batch entries (-D Slots=N), one line of tokens per prompt, in order");
  one->excludes(many);
  many->excludes(one);
  c->add_option("--kv-cache", gOpts.kvCache,
                "How --prompts holds its sequences' keys and values: paged (one pool of pages, through the model's "
                "prefill_paged and decode_paged), slots (a cache slot a sequence: prefill_slot, decode_batch), or "
                "auto (paged where the model has it)")
      ->check(CLI::IsMember({"auto", "paged", "slots"}))
      ->default_val("auto");
  c->add_option("--max-new-tokens", gOpts.maxNewTokens, "Tokens to generate")->default_val(16);
  c->add_flag("--interpret", gOpts.interpret,
              "Run prefill and decode with the reference interpreter (nothing is compiled)");
  tool::addNoMmapOption(c);
  return c;
}

int tool::runGenerate() {
  if (gOpts.prompt.empty() && gOpts.prompts.empty()) {
    std::cerr << "linnet generate: error: give --prompt IDS or --prompts FILE\n";
    return 2;
  }
  // The prompts: one from --prompt, or a file's lines (blank ones skipped).
  std::vector<std::vector<int64_t>> prompts;
  if (!gOpts.prompts.empty()) {
    std::ifstream in(gOpts.prompts);
    if (!in) {
      std::cerr << fmt::format("linnet generate: error: {}: cannot open\n", gOpts.prompts);
      return 1;
    }
    std::string line;
    for (int64_t n = 1; std::getline(in, line); ++n) {
      line.erase(std::remove_if(line.begin(), line.end(), [](char ch) { return ch == ' ' || ch == '\r' || ch == '\t'; }),
                 line.end());
      if (line.empty())
        continue;
      std::string bad;
      std::optional<std::vector<int64_t>> ids = parseTokens(line, bad);
      if (!ids || ids->empty()) {
        std::cerr << fmt::format("linnet generate: error: {}:{}: expected token ids like 1,2,3; found '{}'\n",
                                 gOpts.prompts, n, ids ? line : bad);
        return 2;
      }
      prompts.push_back(std::move(*ids));
    }
    if (prompts.empty()) {
      std::cerr << fmt::format("linnet generate: error: {}: no prompt in the file\n", gOpts.prompts);
      return 2;
    }
  } else {
    std::string bad;
    std::optional<std::vector<int64_t>> ids = parseTokens(gOpts.prompt, bad);
    if (!ids) {
      std::cerr << fmt::format("linnet generate: error: --prompt expects token ids like 1,2,3; "
                               "found '{}'\n",
                               bad);
      return 2;
    }
    if (ids->empty()) {
      std::cerr << "linnet generate: error: --prompt is empty\n";
      return 2;
    }
    prompts.push_back(std::move(*ids));
  }
  const std::vector<int64_t> &prompt = prompts[0];
  std::string error;
  rt::LoadOptions lo;
  lo.weightsPath = gOpts.weights;
  lo.mapWeights = tool::mapWeights();
  if (!gOpts.binding.empty()) {
    std::shared_ptr<rt::BindingMap> b = rt::BindingMap::load(gOpts.binding, error);
    if (!b) {
      std::cerr << "linnet generate: error: " << error << "\n";
      return 1;
    }
    lo.externalName = [b](const std::string &p) { return b->externalName(p); };
    lo.binding = b;
  }
  // The compiled model or the interpreter: one way to call an entry.
  std::unique_ptr<rt::Model> model;
  std::unique_ptr<interp::Interpreter> interpreter;
  std::function<bool(const std::string &)> hasEntry;
  std::function<bool(const std::string &, const std::vector<rt::TensorView> &, std::vector<rt::OwnedTensor> &,
                     std::string &)>
      call;
  std::function<bool(const std::string &, const std::vector<rt::TensorView> &, std::string &)> check;
  if (gOpts.interpret) {
    interpreter = tool::loadInterpreter(gOpts.model, gOpts.source, gOpts.weights, gOpts.binding, "generate");
    if (!interpreter)
      return 1;
    hasEntry = [&](const std::string &e) { return interpreter->inputs(e).has_value(); };
    call = [&](const std::string &e, const std::vector<rt::TensorView> &in, std::vector<rt::OwnedTensor> &out,
               std::string &err) { return interpreter->call(e, in, out, err); };
    check = [&](const std::string &e, const std::vector<rt::TensorView> &in, std::string &err) {
      return interpreter->check(e, in, err);
    };
  } else {
    std::optional<std::string> dir =
        tool::resolveArtifact(gOpts.model, gOpts.source, gOpts.weights, gOpts.binding);
    if (!dir)
      return 1;
    model = rt::Model::load(*dir, lo, error);
    if (!model) {
      std::cerr << "linnet generate: error: " << error << "\n";
      return 1;
    }
    hasEntry = [&](const std::string &e) { return model->findEntry(e) != nullptr; };
    call = [&](const std::string &e, const std::vector<rt::TensorView> &in, std::vector<rt::OwnedTensor> &out,
               std::string &err) { return model->call(e, in, out, err); };
    check = [&](const std::string &e, const std::vector<rt::TensorView> &in, std::string &err) {
      return model->check(e, in, err);
    };
  }
  if (!gOpts.prompts.empty())
    return generateBatched(prompts, hasEntry, call, check);
  for (const char *e : {"prefill", "decode"})
    if (!hasEntry(e)) {
      std::cerr << fmt::format("linnet generate: error: the model has no '{}' entry "
                               "(generate needs prefill and decode)\n",
                               e);
      return 1;
    }

  // Generation reads the prompt's last logits only: a model whose
  // `prefill_last` returns just those ([1, Vocab]) runs it instead of
  // `prefill` (the vocabulary projection of one row, not of every one).
  const std::string prefill = hasEntry("prefill_last") ? "prefill_last" : "prefill";
  const bool lastRowOnly = prefill == "prefill_last";

  // Every position the run needs must be in the KV cache, as the entries
  // declare it: the prompt fills 0 .. P - 1, the decodes P .. P + N - 2 (the
  // last token is not fed back). Refused before anything runs.
  rt::OwnedTensor tokens = i64Tensor({static_cast<int64_t>(prompt.size())}, prompt);
  if (!check(prefill, {tokens.view()}, error)) {
    std::cerr << fmt::format("linnet generate: error: the prompt's {} tokens do not fit the model: {}\n",
                             prompt.size(), error);
    return 1;
  }
  int64_t first = static_cast<int64_t>(prompt.size());
  auto decodeFits = [&](int64_t pos, std::string &why) {
    rt::OwnedTensor tok = i64Tensor({1}, {0}), p = i64Tensor({}, {pos});
    return check("decode", {tok.view(), p.view()}, why);
  };
  // A decode that takes any position declares no cache length: say so
  // rather than decode silently past the cache.
  std::string unbounded;
  if (gOpts.maxNewTokens > 1 && decodeFits(int64_t(1) << 62, unbounded))
    std::cerr << "linnet generate: warning: entry 'decode' declares no bound on its position "
                 "(`where pos < MaxSeq`): a position past the model's KV cache cannot be refused\n";
  if (gOpts.maxNewTokens > 1) {
    int64_t last = first + static_cast<int64_t>(gOpts.maxNewTokens) - 2;
    if (!decodeFits(last, error)) {
      // The bound is monotone in the position: the last one that fits.
      std::string ignored;
      int64_t lo = first - 1, hi = last; // lo fits (or is the prompt), hi does not
      while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        (decodeFits(mid, ignored) ? lo : hi) = mid;
      }
      std::cerr << fmt::format("linnet generate: error: --max-new-tokens {} after a prompt of {} tokens "
                               "decodes up to position {}, past the model's KV cache: {}; at most {} new "
                               "tokens fit after this prompt\n",
                               gOpts.maxNewTokens, prompt.size(), last, error, lo - first + 2);
      return 1;
    }
  }

  using clock = std::chrono::steady_clock;
  std::vector<rt::OwnedTensor> out;
  auto t0 = clock::now();
  if (!call(prefill, {tokens.view()}, out, error)) {
    std::cerr << "linnet generate: error: " << prefill << ": " << error << "\n";
    return 1;
  }
  auto t1 = clock::now();
  // --max-new-tokens 0 runs the prompt and prints no token (an empty line).
  std::vector<int64_t> generated;
  if (gOpts.maxNewTokens > 0)
    generated.push_back(argmaxRow(out[0], lastRowOnly ? 0 : static_cast<int64_t>(prompt.size()) - 1));
  int64_t pos = static_cast<int64_t>(prompt.size());
  while (generated.size() < gOpts.maxNewTokens) {
    rt::OwnedTensor tok = i64Tensor({1}, {generated.back()});
    rt::OwnedTensor p = i64Tensor({}, {pos});
    if (!call("decode", {tok.view(), p.view()}, out, error)) {
      std::cerr << "linnet generate: error: decode at position " << pos << ": " << error << "\n";
      return 1;
    }
    generated.push_back(argmaxRow(out[0], 0));
    ++pos;
  }
  auto t2 = clock::now();
  std::cout << fmt::format("{}\n", fmt::join(generated, ","));
  double prefillS = std::chrono::duration<double>(t1 - t0).count();
  double decodeS = std::chrono::duration<double>(t2 - t1).count();
  size_t steps = generated.empty() ? 0 : generated.size() - 1;
  std::cerr << fmt::format("prefill: {} tokens in {:.3f} s; decode: {} tokens in {:.3f} s, "
                           "{:.1f} tokens/s\n",
                           prompt.size(), prefillS, steps, decodeS,
                           steps ? static_cast<double>(steps) / decodeS : 0.0);
  return 0;
}
