//===- QuantizeCommand.cpp - `linnet quantize` ----------------------------===//
//
// Weights (safetensors, a sharded checkpoint's index, or GGUF) to fewer
// bytes per weight: a GGUF file whose matrices are in one of ggml's block
// formats (q8_0, q4_0, q4_K, q5_K, q6_K: ggml's reference quantizers, the
// bytes llama.cpp's quantizer writes without an importance matrix), or a
// GGUF or safetensors file whose matrices are f16 or bf16. What is
// converted: every float tensor of rank 2 or more whose rows are whole
// blocks of the format; vectors (norm scales, biases), integer tensors and
// the tensors --keep names stay as they are, as llama.cpp's quantizer
// keeps them. A GGUF input's metadata is kept, with general.file_type and
// general.quantization_version set for what was written. Names are kept:
// the result binds to the same model as the input.
//
//===----------------------------------------------------------------------===//
#include "QuantizeCommand.h"

#include "linnet/Runtime/Quantize.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/Half.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>

using namespace linnet;

namespace {

struct Options {
  std::string input, output, type;
  std::vector<std::string> keep;
  std::vector<std::string> tensorTypes; // PATTERN=TYPE
  bool allowRequantize = false;
} gOpts;

/// `*` matches any run of characters (`model.layers.*.mlp.*`).
bool globMatch(const char *p, const char *s) {
  if (*p == '\0')
    return *s == '\0';
  if (*p == '*')
    return globMatch(p + 1, s) || (*s && globMatch(p, s + 1));
  return *s == *p && globMatch(p + 1, s + 1);
}

/// llama.cpp's llama_ftype for a file whose matrices are all of `type`.
uint32_t fileType(const std::string &type) {
  static const std::map<std::string, uint32_t> k = {{"f32", 0},   {"f16", 1},   {"q4_0", 2},  {"q8_0", 7},
                                                    {"q4_K", 14}, {"q5_K", 16}, {"q6_K", 18}, {"bf16", 32}};
  return k.at(type);
}

const std::vector<std::string> kTypes = {"q8_0", "q4_0", "q4_K", "q5_K", "q6_K", "f16", "bf16", "f32"};

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

CLI::App *tool::addQuantizeCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand(
      "quantize", "Write weights with fewer bytes per weight: a GGUF file of q8_0, q4_0, q4_K, q5_K or q6_K matrices "
                  "(ggml's reference quantizers), or f16/bf16 matrices as GGUF or safetensors");
  c->add_option("input", gOpts.input, "Weights: .safetensors, model.safetensors.index.json or .gguf")->required();
  c->add_option("-o", gOpts.output, "Output .gguf (any type) or .safetensors (f16, bf16, f32)")->required();
  c->add_option("--type", gOpts.type, "What the matrices become")
      ->required()
      ->check(CLI::IsMember(kTypes));
  c->add_option("--tensor-type", gOpts.tensorTypes,
                "PATTERN=TYPE: the tensors the name pattern matches become TYPE instead (the first pattern that "
                "matches wins; `*` matches any run of characters), e.g. '*.ffn_down.weight=q8_0' where a "
                "k-quant's blocks of 256 do not divide the rows")
      ->allow_extra_args(false);
  c->add_option("--keep", gOpts.keep,
                "Keep the tensors this name pattern matches as they are (`*` matches any run of characters)")
      ->allow_extra_args(false);
  c->add_flag("--allow-requantize", gOpts.allowRequantize,
              "Quantize tensors the input stores in a block format again (from their dequantized values; each "
              "quantization adds its error)");
  return c;
}

int tool::runQuantize() {
  const Options &o = gOpts;
  bool toGguf = endsWith(o.output, ".gguf");
  if (!toGguf && !endsWith(o.output, ".safetensors")) {
    std::cerr << fmt::format("linnet quantize: error: -o {}: expected a .gguf or .safetensors file name\n", o.output);
    return 2;
  }
  // --tensor-type's patterns, then --type: what each tensor becomes.
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const std::string &tt : o.tensorTypes) {
    size_t eq = tt.rfind('=');
    std::string type = eq == std::string::npos ? "" : tt.substr(eq + 1);
    if (eq == std::string::npos || eq == 0 || std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
      std::cerr << fmt::format("linnet quantize: error: --tensor-type {}: expected PATTERN=TYPE with TYPE one of "
                               "{}\n",
                               tt, fmt::join(kTypes, ", "));
      return 2;
    }
    overrides.emplace_back(tt.substr(0, eq), type);
  }
  std::vector<std::pair<std::string, std::string>> asked = {{"--type " + o.type, o.type}};
  for (const auto &[pattern, type] : overrides)
    asked.emplace_back(fmt::format("--tensor-type {}={}", pattern, type), type);
  for (const auto &[option, type] : asked)
    if (!toGguf && rt::blockFormat(type)) {
      std::cerr << fmt::format("linnet quantize: error: {}: safetensors has no block formats; write a .gguf "
                               "file (-o ....gguf), or f16/bf16 for safetensors\n",
                               option);
      return 2;
    }
  auto typeOf = [&](const std::string &name) -> const std::string & {
    for (const auto &[pattern, type] : overrides)
      if (globMatch(pattern.c_str(), name.c_str()))
        return type;
    return o.type;
  };
  std::string error;
  std::unique_ptr<rt::SafeTensorsFile> in = rt::SafeTensorsFile::open(o.input, error);
  if (!in) {
    std::cerr << "linnet quantize: error: " << error << "\n";
    return 1;
  }

  // Each tensor's new bytes (or its own), in name order.
  struct Out {
    std::string name;
    rt::DType dtype; // the element dtype (block formats: the f32 they stand for)
    std::vector<int64_t> shape;
    uint32_t ggmlType;
    std::vector<std::byte> owned;
    std::span<const std::byte> data;
  };
  std::vector<Out> outs;
  uint64_t bytesIn = 0, bytesOut = 0;
  int converted = 0, kept = 0;
  std::map<std::string, int> convertedAs;
  for (const auto &[name, view] : in->tensors()) {
    const std::string &type = typeOf(name);
    std::optional<rt::BlockFormatInfo> block = rt::blockFormat(type);
    rt::DType halfType = type == "bf16" ? rt::DType::BF16 : type == "f16" ? rt::DType::F16 : rt::DType::F32;
    int64_t blockElems = block ? block->blockElems : 1;
    Out t{name, view.dtype, view.shape, 0, {}, view.data};
    bool isFloat = view.dtype == rt::DType::F32 || view.dtype == rt::DType::F16 || view.dtype == rt::DType::BF16 ||
                   view.dtype == rt::DType::F64;
    int64_t row = view.shape.empty() ? 0 : view.shape.back();
    bool keepIt = false;
    for (const std::string &p : o.keep)
      keepIt = keepIt || globMatch(p.c_str(), name.c_str());
    auto stored = in->storedAs().find(name);
    bool convert = isFloat && view.shape.size() >= 2 && row > 0 && row % blockElems == 0 && !keepIt;
    // Dequantized values widened to f32 are exact; rounded again, not.
    if (convert && stored != in->storedAs().end() && !o.allowRequantize && type != "f32") {
      std::cerr << fmt::format("linnet quantize: error: {}: tensor '{}' is stored as {}: quantizing its dequantized "
                               "values adds a second error (--allow-requantize to do it anyway, or --keep '{}')\n",
                               o.input, name, stored->second, name);
      return 1;
    }
    // A block-format input tensor that stays: written as the f32 it reads as.
    int64_t n = view.numElements();
    // A tensor the input stores in blocks counts the bytes it is stored in.
    std::optional<rt::BlockFormatInfo> storedFormat =
        stored == in->storedAs().end() ? std::nullopt : rt::blockFormat(stored->second);
    bytesIn += storedFormat ? uint64_t(n / storedFormat->blockElems * storedFormat->blockBytes) : view.data.size();
    if (convert) {
      // The values as f32 (ggml's quantizers take f32 rows).
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const std::byte *p = view.data.data();
        switch (view.dtype) {
        case rt::DType::F32: std::memcpy(&x[i], p + 4 * i, 4); break;
        case rt::DType::F64: {
          double d;
          std::memcpy(&d, p + 8 * i, 8);
          x[i] = float(d);
          break;
        }
        default: {
          uint16_t h;
          std::memcpy(&h, p + 2 * i, 2);
          x[i] = view.dtype == rt::DType::F16 ? support::f16ToF32(h) : support::bf16ToF32(h);
        }
        }
      }
      // A block's scale is taken from its largest value: one infinity or
      // NaN would make every value of the block meaningless.
      for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(x[size_t(i)])) {
          std::cerr << fmt::format("linnet quantize: error: {}: tensor '{}': element {} is {}, which no format "
                                   "can hold\n",
                                   o.input, name, i, x[size_t(i)]);
          return 1;
        }
      if (block) {
        t.owned.resize(size_t(n / block->blockElems * block->blockBytes));
        for (int64_t r = 0; r < n / row; ++r)
          rt::quantizeRow(block->format, x.data() + r * row, row,
                          reinterpret_cast<unsigned char *>(t.owned.data()) + r * (row / blockElems) * block->blockBytes);
        t.ggmlType = block->ggmlType;
        t.dtype = rt::DType::F32;
      } else if (halfType == rt::DType::F32) {
        t.owned.resize(size_t(n) * 4);
        std::memcpy(t.owned.data(), x.data(), t.owned.size());
        t.dtype = rt::DType::F32;
      } else {
        t.owned.resize(size_t(n) * 2);
        for (int64_t i = 0; i < n; ++i) {
          uint16_t h = halfType == rt::DType::F16 ? support::f32ToF16(x[i]) : support::f32ToBF16(x[i]);
          std::memcpy(t.owned.data() + 2 * i, &h, 2);
        }
        t.dtype = halfType;
      }
      t.data = {t.owned.data(), t.owned.size()};
      ++converted;
      ++convertedAs[type];
    } else {
      ++kept;
    }
    if (!block || !convert) {
      std::optional<uint32_t> g = rt::ggmlTypeOf(t.dtype);
      if (toGguf && !g) {
        std::cerr << fmt::format("linnet quantize: error: {}: tensor '{}' has dtype {}, which GGUF cannot hold\n",
                                 o.input, name, rt::dtypeName(t.dtype));
        return 1;
      }
      t.ggmlType = g.value_or(0);
    }
    bytesOut += t.data.size();
    outs.push_back(std::move(t));
  }
  if (!converted) {
    std::cerr << fmt::format("linnet quantize: error: {}: no tensor to convert to {} (matrices whose rows are whole "
                             "blocks of {})\n",
                             o.input, o.type, rt::blockFormat(o.type) ? rt::blockFormat(o.type)->blockElems : 1);
    return 1;
  }

  bool ok;
  if (toGguf) {
    std::vector<std::pair<std::string, std::string>> meta;
    for (const auto &[k, raw] : in->ggufMetadataRaw())
      if (k != "general.file_type" && k != "general.quantization_version")
        meta.emplace_back(k, raw);
    meta.emplace_back("general.file_type", rt::ggufU32Value(fileType(o.type)));
    meta.emplace_back("general.quantization_version", rt::ggufU32Value(2));
    std::vector<rt::GgufTensorOut> tensors;
    for (const Out &t : outs)
      tensors.push_back({t.name, t.shape, t.ggmlType, t.data});
    ok = rt::writeGguf(o.output, meta, tensors, error);
  } else {
    std::map<std::string, rt::TensorView> tensors;
    for (const Out &t : outs)
      tensors[t.name] = {t.dtype, t.shape, t.data};
    ok = rt::writeSafeTensors(o.output, tensors, error);
  }
  if (!ok) {
    std::cerr << "linnet quantize: error: " << error << "\n";
    return 1;
  }
  auto size = [](uint64_t b) { return b < 1000000 ? fmt::format("{} bytes", b) : fmt::format("{:.1f} MB", b / 1e6); };
  // "56 tensors as q4_K, 8 as q8_0, 17 kept": --type first, then each
  // --tensor-type's type in name order.
  std::string as = fmt::format("{} tensor{} as {}", convertedAs[o.type], convertedAs[o.type] == 1 ? "" : "s", o.type);
  for (const auto &[type, count] : convertedAs)
    if (type != o.type && count)
      as += fmt::format(", {} as {}", count, type);
  std::cout << fmt::format("{}: {}, {} kept; {} -> {}\n", o.output, as, kept, size(bytesIn), size(bytesOut));
  return 0;
}
