//===- ImporterImpl.h - The plan importer's walker --------------*- C++ -*-===//
//
// Private to lib/Import. Walks each root entry's Core IR once, as an abstract
// interpreter that emits MLIR: block instances, optionals, structs and arrays
// of sub blocks are resolved at import time (they have no runtime
// representation), while scalars and tensors become SSA values. Integers
// known at build time are tracked next to their SSA values, which is what
// unrolls `while l < Layers` over an array of sub blocks. docs/importer.md
// describes the mapping.
//
// One class holds the walk's state; its member functions are defined by
// concern: PlanImporter.cpp (the driver, regions, calls, loop-invariant
// work), Types.cpp (types, dims, run-time checks), Scalars.cpp,
// Operations.cpp, Entries.cpp (entries, state, outlined methods of array
// elements), Tensors.cpp, Reductions.cpp and Relations.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_LIB_IMPORT_IMPORTERIMPL_H
#define LINNET_LIB_IMPORT_IMPORTERIMPL_H

#include "linnet/Import/PlanImporter.h"
#include "linnet/ir/reducers.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace linnet::import::detail {

// The MLIR names the declarations use (the sources use all of mlir).
using mlir::ArrayRef;
using mlir::Block;
using mlir::FlatSymbolRefAttr;
using mlir::FloatType;
using mlir::IndexType;
using mlir::IntegerType;
using mlir::Location;
using mlir::MemRefType;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::OwningOpRef;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::SmallVectorImpl;
using mlir::Type;
using mlir::UnknownLoc;
using mlir::Value;
using mlir::ValueRange;
namespace arith = mlir::arith;
namespace linalg = mlir::linalg;
using json = nlohmann::json;

/// An error in the model that this importer cannot compile; caught at the
/// API boundary (never thrown through MLIR callbacks).
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string &msg) { throw ImportError(msg); }

/// A dim: known at build time, or an index SSA value (entry generics).
struct DimV {
  std::optional<int64_t> c;
  Value v;
};

/// An imported Core IR value.
struct V {
  enum Kind { None, Scalar, Tensor, Block, Blocks, Opt, Agg, Rel } k = None;
  Value v;                        // Scalar, Tensor
  std::optional<int64_t> c;       // Scalar: an integer known at build time
  std::string path;               // Block, Blocks: canonical path ("" = root)
  bool present = false;           // Opt
  std::vector<V> elems;           // Opt (one), Agg (fields / tuple elements)
  std::vector<std::string> names; // Agg field names
  Value rowPtr, colIdx;           // Rel (CSR, destination-major)
  Value relation;                 // Rel built in the model: its gf.relation (facts the pass derives)
  DimV numDst;
  DimV numSrc;                    // Rel
  std::string relName;            // Rel: the input's name (gf.relation's relation_id)
  bool uns = false;               // Scalar, Tensor: an unsigned integer (u8, ...) in signless bits
  /// Tensor: a param stored in a block format ("q8_0", "q4_K", ...): `v`
  /// holds its blocks, [..., last / block values, block bytes] i8
  /// (Importer::tensorMemref).
  std::string fmt;

  static V scalar(Value v, std::optional<int64_t> c = std::nullopt) {
    V r;
    r.k = Scalar;
    r.v = v;
    r.c = c;
    return r;
  }
  static V tensor(Value v) {
    V r;
    r.k = Tensor;
    r.v = v;
    return r;
  }
};

struct Frame {
  std::string fn; // function name, for errors
  std::map<std::string, DimV> dims;
  std::map<std::string, std::vector<DimV>> packs; // shape generics (`S: shape`), as dims
  std::map<std::string, std::string> dtypes;
  std::optional<std::string> self; // canonical path of the receiver
  std::unordered_map<ir::ValueId, V> env;
};

inline std::string joinPath(const std::string &a, const std::string &b) {
  return a.empty() ? b : a + "." + b;
}

inline bool isFloat(Type t) { return mlir::isa<FloatType>(t); }
inline bool isIntLike(Type t) { return mlir::isa<IntegerType, IndexType>(t); }

/// The walk over one plan (importPlan makes one per import): its state,
/// and a member function per construct.
class Importer {
public:
  Importer(const plan::Plan &p, const std::vector<ModelTensor> &tensors, MLIRContext &ctx)
      : plan_(p), tensors_(tensors), ctx_(ctx), b_(&ctx), loc_(UnknownLoc::get(&ctx)),
        userLoc_(UnknownLoc::get(&ctx)) {
    for (const plan::Function &f : p.functions)
      fns_[f.name] = &f;
    for (const plan::Constant &c : p.constants)
      consts_[c.name] = &c;
    for (const ModelTensor &t : tensors)
      byPath_[t.path] = &t;
  }

  /// An op's `loc` ("file:line:col") as an MLIR FileLineColLoc.
  std::optional<Location> sourceLoc(const std::string &loc);
  /// The source location of the op being imported ("file:line:col: "), or
  /// empty when it has none.
  std::string sourcePrefix() const;
  /// The source position of the plan op being imported (null: none).
  mlir::FileLineColLoc sourceLoc() const;

  bool checks = true;       // ImportOptions::runtimeChecks
  unsigned foldChunks = 0;  // ImportOptions::foldChunks
  unsigned softmaxBlock = 0; // ImportOptions::softmaxBlock
  std::map<std::string, int64_t> extents; // ImportOptions::extents
  std::set<std::string> extentsUsed;

  OwningOpRef<ModuleOp> run();

private:
  const plan::Plan &plan_;
  const std::vector<ModelTensor> &tensors_;
  MLIRContext &ctx_;
  OpBuilder b_;
  Location loc_;
  /// The innermost location outside the standard library: where a user
  /// wrote the call that a std function's op came from.
  Location userLoc_;
  std::map<std::string, const plan::Function *> fns_;
  std::map<std::string, const plan::Constant *> consts_;
  std::map<std::string, const ModelTensor *> byPath_;
  // Run-time checks emitted so far (runtime.json `checks`), and the
  // function that reports a failed one.
  std::vector<json> checks_;
  bool statusGlobal_ = false;
  std::map<ir::ValueId, std::string> names_;
  // Per entry: the tensor value of every present model tensor, and the
  // current value of every state tensor (writes replace it).
  std::map<std::string, Value> tensorVal_;
  std::map<std::string, Value> stateVal_;
  // Per function: the memref of every present model tensor, and for each
  // state the value equal to its memref's contents (no write pending).
  std::map<std::string, Value> memrefVal_;
  std::map<std::string, Value> stateBase_;
  // Outlined methods of array elements (docs/importer.md "Arrays of sub
  // blocks"): the canonical paths of the elements `index` produced, and the
  // function built for each specialization key.
  std::set<std::string> elementPaths_;
  std::map<std::string, std::string> outlined_;
  // Per function: the states whose current value has been read (it may
  // still be used after a call that updates the state's memref in place).
  std::set<std::string> observed_;
  std::string where_; // "function F, op K (name)" for errors
  int nest_ = 0;      // > 0 inside a loop body or a linalg.generic body
  // Values given to specific ops instead of evaluating them: the block
  // arguments of a linalg.generic standing for its inputs' elements.
  std::map<const ir::Op *, V> preset_;
  // Whether a function may write state (writesState), by name.
  std::map<std::string, bool> writesState_;

  //===--------------------------------------------------------------===//
  // Types and dims
  //===--------------------------------------------------------------===//

  Type elemType(const std::string &name);

  //===--------------------------------------------------------------===//
  // Block-quantized params (docs/language/05-types.md)
  //===--------------------------------------------------------------===//

  /// The memref model tensor `t` is bound as: its shape and dtype, or for a
  /// param stored in a block format (support::kBlockFormats) its blocks,
  /// [..., last / block values, block bytes] of i8 (runtime.json names the
  /// format; the runtime binds the blocks as they are).
  MemRefType tensorMemref(const ModelTensor &t);
  /// Values a block of format `fmt` holds (32; the k-quants 256).
  static int64_t blockElems(const std::string &fmt);
  /// The bytes value `k` of a row reads from its block (`k / blockElems`),
  /// as affine expressions of k: the scales' and the quant's.
  static SmallVector<mlir::AffineExpr> blockBytes(const std::string &fmt, mlir::AffineExpr k);
  /// The value of one element of a block tensor, in f32, from the bytes
  /// blockBytes names and its index `k` on the last axis: exactly as
  /// ggml's dequantize_row_* computes it (the same f32 operations in the
  /// same order, rt::dequantizeBlocks). The final operation carries
  /// `linnet.dequant` = fmt, which the CPU target's block products
  /// recognize.
  Value dequantize(const std::string &fmt, ArrayRef<Value> bytes, Value k);
  /// Element `idx` (bounds-checked against the values' shape) of block
  /// tensor `base`, read byte by byte (tensor.extract).
  V blockRead(const ir::Op &op, const V &base, SmallVector<Value> idx);

  std::string dtypeName(const json &d, Frame &f);

  Value cIndex(int64_t v) { return b_.create<arith::ConstantIndexOp>(loc_, v); }

  //===--------------------------------------------------------------===//
  // Run-time checks (docs/runtime-abi.md, "Run-time checks")
  //===--------------------------------------------------------------===//

  /// Names for messages: a `let` name, or the member a read names.
  void nameValues(const ir::Op &op);
  std::string valueName(ir::ValueId id) const;

  /// The location of the op being imported as "file:line:col", or "".
  std::string locText() const;

  /// @linnet_report(id, value, bound): the first failed check of a call wins
  /// the library's `linnet_status` (id, value, bound); the runtime reads it
  /// after the call and clears it. Atomic: kernels may run on threads.
  /// The status word the runtime reads after each call: `linnet_status`,
  /// int64_t[4] = {check id, value, bound, failure count}.
  MemRefType statusType() { return MemRefType::get({4}, b_.getI64Type()); }
  void ensureStatusGlobal();

  /// Reports check `c` (a row of runtime.json's `checks`) when `failed`
  /// holds, with `value` and `bound` (any integer or index type). Inline,
  /// not a helper function: it may sit in any kernel body, and every
  /// function of the module is a task for the planner.
  void report(Value failed, json c, Value value, Value bound);

  /// `i` (index) checked against `size` (index): out of range reports check
  /// `c` and reads at 0 instead, so that nothing outside the tensor is read.
  Value checkedIndex(Value i, Value size, json c);

  Value dimValue(const DimV &d) { return d.c ? cIndex(*d.c) : d.v; }

  /// A dim that sizes an axis or a loop: negative with the build's
  /// generics, it is refused where it is written.
  DimV extent(const json &d, Frame &f);

  DimV dim(const json &d, Frame &f);

  /// The MLIR type of a plan scalar or tensor type; `dynDims` receives the
  /// SSA values of the dynamic dims of a tensor.
  Type type(const json &t, Frame &f, SmallVectorImpl<Value> *dynDims = nullptr);

  //===--------------------------------------------------------------===//
  // Scalars
  //===--------------------------------------------------------------===//

  Value constant(Type t, double v);

  Value infinity(Type t, bool negative);

  /// `v as uN` (§6.9): truncation toward zero, saturating at [0, 2^N - 1],
  /// NaN to 0.
  Value floatToUnsigned(Value v, IntegerType to);

  /// Whether a plan type is an unsigned integer (u8, u16, u32, u64):
  /// signless in MLIR, so the ops whose meaning depends on the sign
  /// (casts, comparisons, division, min/max) take it from here.
  bool isUnsigned(const json &t, Frame &f);

  /// `v as iN` (§6.9): truncation toward zero, saturating at the type's
  /// range, NaN to 0 (LLVM's fptosi alone is poison there); `as bool` is
  /// `v != 0`. The clamp is exact in f64 for N <= 32; for i64 the largest
  /// f64 below 2^63 is clamped to and 2^63 and above select the maximum.
  Value floatToInt(Value v, IntegerType to);

  Value convert(Value v, Type to);

  /// The common type of two scalar operands of a mixed index/int operation.
  Type common(Type a, Type b);

  arith::FastMathFlagsAttr reassoc();

  Value binary(const std::string &op, Value a, Value c, Type t, bool fast = false, bool uns = false);

  static std::optional<int64_t> fold(const std::string &op, int64_t a, int64_t c);

  // A rank-0 tensor is a scalar (§5.1: `f32` and `Tensor[; f32]` are one
  // type): a param, buffer or state of rank 0 is bound as a tensor<T> and
  // read as its element, and a scalar goes where a rank-0 tensor is wanted.
  V scalarOf(const V &v);

  /// The body block of `gen`: one argument per input's element and the
  /// output's, the builder at its start (the caller holds the guard).
  Block *genericBody(linalg::GenericOp gen, ValueRange inputs, Type outElem);

  /// `resT` computed element by element: `body` gets each operand's element
  /// (a tensor operand's at the position, a scalar operand as it is) and
  /// returns the result's. Tensor operands have `resT`'s shape.
  V elementwise(RankedTensorType resT, const std::vector<V> &xs,
                const std::function<Value(ArrayRef<Value>)> &body);

  Value tensorOf(const V &v);

  /// A member's or state's tensor as a value: its element when it has rank 0.
  V valueOf(Value t);

  //===--------------------------------------------------------------===//
  // Entries
  //===--------------------------------------------------------------===//

  /// Whether a dim refers to one of `syms` (an entry generic: its value is
  /// known only at run time).
  static bool mentions(const json &d, const std::set<std::string> &syms);

  void entry(const plan::Function &fn);

  //===--------------------------------------------------------------===//
  // Regions and calls
  //===--------------------------------------------------------------===//

  /// Evaluates a region with its arguments bound; returns what its
  /// `yield`/`return` yields.
  /// Evaluates `r` with `args` and returns what it yields; with `until`,
  /// stops before that op (its operands evaluated) and returns nothing.
  void bindArgs(const ir::Region &r, Frame &f, const std::vector<V> &args);
  std::vector<V> region(const ir::Region &r, Frame &f, const std::vector<V> &args,
                        const ir::Op *until = nullptr);
  /// The k-th value `r` yields, evaluating only the ops it depends on (a
  /// reduction's message taken apart: the scores of a block, then its values).
  V regionPart(const ir::Region &r, Frame &f, const std::vector<V> &args, size_t k);
  /// Which ops of `r` its k-th yielded value depends on (regionPart's walk).
  std::vector<bool> neededOps(const ir::Region &r, size_t k);
  /// `r`'s arguments bound to `args` in `f`, their count checked.
  void bindRegionArgs(const ir::Region &r, Frame &f, const std::vector<V> &args);
  /// Binds a preset op's value (preset_) or imports the op.
  void bindOrEvaluate(const ir::Op &op, Frame &f);

  /// Imports one op of a region at the builder's point, binding its results
  /// in the frame; returns them.
  std::vector<V> evaluate(const ir::Op &op, Frame &f);

  //===--------------------------------------------------------------===//
  // Loop-invariant work
  //===--------------------------------------------------------------===//

  /// Whether calling `callee` may write state (a `state.write` in its body
  /// or in anything it calls): such a call is never moved.
  bool writesState(const std::string &callee);
  bool writesState(const ir::Region &r);

  /// Every value `op` reads: its operands and those of the ops nested in it
  /// (including values its regions define, which are not outside it).
  static void reads(const ir::Op &op, std::vector<ir::ValueId> &out);
  /// Every value of `ops` (nested regions included) computed from one of
  /// `seeds`, added to `seeds`.
  static void dependents(const std::vector<ir::Op> &ops, std::set<ir::ValueId> &seeds);

  /// The ops of a loop's body (a comprehension's, or an unfiltered
  /// reduction's, and the loops nested in it) that do not depend on any of
  /// its indices, such as `linear1.forward(h)` in `[t: N, k: F]
  /// relu(linear1.forward(h)[t, k])`: work that would otherwise run once
  /// per element. Returns the ones worth moving (a call, a tensor, an op
  /// with regions) with the invariant ops they read, in order. Ops inside
  /// a branch stay where they are (they may not run at all), as does a call
  /// that may write state.
  std::vector<const ir::Op *> invariantWork(const ir::Op &loop);

  /// Evaluates a loop's invariant work (invariantWork) once, before the
  /// loop, and presets the body's ops to its values until destroyed.
  struct Hoisted {
    std::map<const ir::Op *, V> &preset;
    std::vector<const ir::Op *> ops;
    ~Hoisted() {
      for (const ir::Op *o : ops)
        preset.erase(o);
    }
  };
  std::unique_ptr<Hoisted> hoistInvariantWork(const ir::Op &loop, Frame &f);

  /// A function's returned values as its plan lists them: a returned tuple
  /// is one Core IR value, the plan gives each of its elements a result.
  static std::vector<V> planResults(std::vector<V> rs, const plan::Function &fn);

  V get(Frame &f, ir::ValueId id);

  /// Binds a callee's generics from a call's `substitution` (values in the
  /// caller's terms).
  void bindSubstitution(const json &subst, Frame &caller, Frame &callee);

  std::vector<V> call(const plan::Function &fn, Frame callee, const std::vector<V> &args);

  //===--------------------------------------------------------------===//
  // Outlined methods of array elements
  //===--------------------------------------------------------------===//

  static std::string typeText(Type t);

  /// A method called on an element of an array of sub blocks (`layers[l]
  /// .forward(h, start)`) becomes a private function, built once per
  /// specialization and called once per element with that element's tensors
  /// as memref arguments, so the layer body is compiled once rather than
  /// once per layer. The specialization key holds everything the body's
  /// import depends on besides those tensors: the callee, its generics
  /// (constants, or dynamic and passed as index arguments), the element's
  /// tensors relative to its path (kind, dtype, shape, presence), and the
  /// arguments' types and build-time integers (a known integer is bound
  /// inside, not passed, so `start = 0` still folds in prefill's layers).
  /// Tensors cross as memrefs in destination-passing style: inputs read
  /// through `to_tensor restrict`, results written into buffers the caller
  /// allocates, state read and written in place through the element's state
  /// memrefs (the KV-cache append stays in place). Returns nullopt, having
  /// emitted nothing the caller keeps, when the call cannot be outlined
  /// (block, optional, aggregate or relation arguments or results; the
  /// caller has read the element's state) or the body fails to import
  /// outlined; the caller then inlines it.
  std::optional<std::vector<V>> callOutlined(const plan::Function &fn, const Frame &callee,
                                             const std::vector<V> &args);

  /// Builds the function of callOutlined's specialization; its arguments:
  /// the call's runtime scalars and tensors, the dynamic generics, the
  /// element's present tensors (manifest order), the result buffers.
  std::optional<std::string> buildOutlined(const plan::Function &fn, const Frame &callee,
                                           const std::vector<V> &args,
                                           const std::vector<const ModelTensor *> &own,
                                           const std::vector<std::string> &dynDims,
                                           const std::vector<MemRefType> &resultTypes);

  //===--------------------------------------------------------------===//
  // Operations
  //===--------------------------------------------------------------===//

  std::vector<V> operation(const ir::Op &op, Frame &f);

  V constantValue(const plan::Constant &c, Type t);

  Value compare(const std::string &p, Value a, Value c, bool uns = false);

  V builtin(const std::string &name, const ir::Op &op, Frame &f);

  std::vector<V> ifOp(const ir::Op &op, Frame &f);

  /// A `while` whose condition is known only at run time (a recurrence
  /// over an entry's sequence length): an scf.while carrying the loop's
  /// values as leaves (numbers and tensors, of structs and tuples too), in
  /// the plan's types, and the state its body writes.
  std::vector<V> runtimeWhile(const ir::Op &op, Frame &f, std::vector<V> carried);

  std::vector<V> whileOp(const ir::Op &op, Frame &f);

  //===--------------------------------------------------------------===//
  // Tensors
  //===--------------------------------------------------------------===//

  V index(const ir::Op &op, Frame &f);

  V slice(const ir::Op &op, Frame &f);

  /// Domain sizes of a comprehension's or reduction's dense indices.
  std::vector<DimV> domains(const json &indices, Frame &f);

  V comprehension(const ir::Op &op, Frame &f);

  /// `[i.., p, ..] if p >= A && p < B { new } else { X[i.., p, ..] }` (a
  /// KV-cache append: X a tensor of the comprehension's shape read at its
  /// indices in order, A and B independent of the indices) becomes
  /// `tensor.insert_slice` of `new`, computed over p in [A, B) only, into X
  /// at A: the rest of X is neither read nor rewritten, and a state X is
  /// updated in place after bufferization. The condition may bound several
  /// indices (a conjunction of `>=` and `<` bounds, each index bounded once
  /// each way: a cache slot and its positions), the box then being the
  /// slice. Returns nothing when the body does not have this form.
  std::optional<V> sliceUpdate(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                               RankedTensorType resT);

  /// Ops that only name a tensor of the model (no IR): evaluated ahead so
  /// that the tensors they name can become inputs of a linalg.generic.
  static bool namesTensor(const ir::Op &op);

  /// Evaluates ahead the ops of `r` that name a model tensor, into `local`
  /// and the frame (a later naming op reads them: `norm.weight` is `member`
  /// of `sub norm`), with the element picks they go through
  /// (`layers[0].total`: the sub, its constant index, the element, the
  /// state read). An op that needs a value of the body (an element picked
  /// by a loop index) is left to the body.
  void nameTensorsAhead(const ir::Region &r, Frame &f, std::unordered_map<ir::ValueId, V> &local);

  /// The size of loop `pos` of a comprehension (its domains, then its
  /// reduction's).
  static const DimV &loopSize(unsigned pos, const std::vector<DimV> &ds,
                              const std::vector<DimV> &rds);

  /// Whether axis `k` of tensor `t` is known to have size `d`: both
  /// constants and equal, or `d` is `tensor.dim t, k`.
  static bool sameSize(const DimV &d, Value t, int64_t k);

  /// A comprehension as one linalg.generic whose reads at plain loop
  /// indices are inputs with indexing maps: `[b, o] sum(i) x[b, i] *
  /// w[o, i]` is a contraction (parallel b, o; reduction i), elementwise
  /// maps are identity or broadcast maps. Other reads stay tensor.extract
  /// at linalg.index positions. Returns nothing when the body does not fit.
  std::optional<V> structured(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                              RankedTensorType resT, ArrayRef<Value> dyn);

  //===--------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------===//

  /// A reducer as four callbacks on flattened states.
  struct Reducer {
    std::function<V()> identity;
    std::function<V(const std::vector<V> &)> lift;
    std::function<V(const V &, const V &)> combine;
    std::function<V(const V &)> finalize;
  };

  static void leaves(const V &v, std::vector<Value> &out);

  static V rebuild(const V &templ, ValueRange vals, size_t &pos);

  /// The leaves of `upd`, a fold's next state, as the loop carrying `iters`
  /// (typed as `initLeaves`) yields them. A tensor state (online softmax's
  /// acc) is copied into the carried tensor: the loop then yields a value
  /// equivalent to its iter_arg, and bufferization updates one buffer in
  /// place instead of allocating (and freeing) a new one every step.
  SmallVector<Value> carried(const V &upd, const std::vector<Value> &initLeaves, ValueRange iters);

  /// A built-in reducer's identities and combines are signed: a sum or a
  /// product wraps the same in either reading, the others (and mean's
  /// division) would not. An unknown name counts as signed.
  static bool signedOnly(const ir::BuiltinReducer *r);

  /// A built-in reducer's identity in `t` (signed for integers: max's is the
  /// signed minimum of the width).
  Value identityConstant(ir::ReduceIdentity id, Type t);

  /// Built-in reducer `name` over `t`; for mean, (sum, count) finalized by
  /// the division.
  Reducer builtinReducer(const std::string &name, Type t);

  /// A built-in reducer's identity and combine over `t` with no finalize
  /// (for mean, its sum).
  /// max and min over bool are any and all (true > false): i1 is no
  /// signed integer here, where maxsi would order true (-1) below false.
  static const ir::BuiltinReducer &onBool(const ir::BuiltinReducer &br, Type t);

  /// The type a built-in reducer accumulates `t` in: a sum (or mean) of
  /// f16 or bf16 terms accumulates in f32 and is rounded to `t` once, at
  /// the end (docs/language.md, "Reductions"; the interpreter does the
  /// same); every other reduction accumulates in `t`.
  Type accumulatorType(const ir::BuiltinReducer &br, Type t);

  /// The state is the accumulator (accumulatorType); finalize rounds it
  /// to `t`.
  Reducer combiningReducer(const ir::BuiltinReducer &reducer, Type t);

  Reducer userReducer(const json &spec, Frame &f);

  /// `j <= X` / `j < X` with X independent of j: the filter of a
  /// triangular domain, turned into the loop's upper bound.
  std::optional<Value> triangularBound(const ir::Op &op, Frame &f, const DimV &domain);

  //===--------------------------------------------------------------===//
  // Relation reductions as gf.apply
  //===--------------------------------------------------------------===//

  /// The module's `gf.reducer` for built-in reducer `name` over `t` (a
  /// scalar, or a tensor<F x T> feature row), created on first use:
  /// `sum_f32`, `max_f32x64`, ...
  FlatSymbolRefAttr gfReducer(const ir::BuiltinReducer &reducer, Type t);
  /// The `mean` reducer: (sum, count) states, sum / count (0 without edges).
  FlatSymbolRefAttr gfMeanReducer(OpBuilder &mb, const std::string &sym, Type t);

  /// `[dst: M] red(src, edge: g[dst]) body` or `[dst: M, f: F] ...` (F
  /// static, a feature axis) with a built-in reducer (sum, max, min, prod;
  /// mean of floats) and no filter, as `gf.relation` + `gf.apply`. Reads `x[src]`,
  /// `x[src, f]`, `w[edge]`, `y[dst]`, `y[dst, f]` become the apply's inputs
  /// with roles src / edge / dst (a read with f a tensor<F> row); the rest
  /// of the body is the edge region, rebuilt elementwise on rows when the
  /// message depends on f. Returns nothing (the caller then lowers the
  /// reduction to row loops) for anything else: user reducers, an integer
  /// mean, filters, other index expressions (x[col_idx-derived], f used in
  /// arithmetic), nested comprehensions/reductions, values captured from
  /// outside the body, or a destination axis that is not the relation's.
  /// `__builtin_knn` / `__builtin_radius` (std.graph): the relation built
  /// from positions by the target's builder (`linnet_relation_build`,
  /// docs/importer.md, "Relations built from coordinates") into row offsets
  /// and column indices, then read like a relation input.
  V builtRelation(const ir::Op &op, Frame &f, bool radius);
  /// `__builtin_paged` (std.graph.paged): a paged gf.relation over the
  /// block table and row lengths, which -gf-expand-paged-relations makes
  /// compressed rows; read like a relation input.
  V pagedRelation(const ir::Op &op, Frame &f);

  std::optional<V> relationApply(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                                 RankedTensorType resT);

  std::vector<V> reduce(const ir::Op &op, Frame &f) { return reduce(op, f, nullptr); }

  //===--------------------------------------------------------------===//
  // Split folds (flash-decoding)
  //===--------------------------------------------------------------===//

  /// A fold split over chunks of its axis: `op` (a reduction in a
  /// comprehension's body) folded chunk by chunk into `partials` (one tensor
  /// per leaf of the reducer's state, indexed [element..., chunk, leaf...]),
  /// then combined in chunk order by each element.
  struct SplitFold {
    const ir::Op *op = nullptr;
    Reducer red;
    V init; // the identity, for the leaves' types
    int64_t chunks = 0;
    std::vector<Value> partials;
  };
  /// The range of the axis one partial fold covers.
  struct ChunkRange {
    Value chunk, size;
  };

  /// Whether the reducer a reduction names is a user reducer declared
  /// associative (its combine may regroup: chunks folded apart, then
  /// combined in order).
  bool associativeUserReducer(const json &spec);

  /// With ImportOptions::foldChunks, a comprehension whose elements each
  /// fold a long dense axis with an associative user reducer (attention's
  /// online softmax over the KV cache: few elements, many keys) folds the
  /// axis in chunks, one element loop over [element..., chunk] writing each
  /// chunk's state, before its own element loop combines them in order:
  /// the key axis is split across threads (flash-decoding), not walked by
  /// one thread a head. The ops of the body before the reduction (none of
  /// them with a region) are evaluated by both loops. Returns nothing (the
  /// fold stays whole) for any other form.
  std::optional<SplitFold> splitFold(const ir::Op &comp, Frame &f, const std::vector<DimV> &ds);

  /// One element's result of a split fold: its chunks' states combined in
  /// chunk order, then finalized.
  V combineChunks(const SplitFold &sf, ArrayRef<Value> ivs);

  /// std.nn's online softmax over keys [lo, hi) in blocks of softmaxBlock
  /// (ImportOptions::softmaxBlock), for one or more lanes: elements of a
  /// comprehension folding the same keys, each with its frame and its state
  /// `inits[r]` (m, l, acc), in one pass over the keys (each key's rows read
  /// once for all lanes). Each lane's final state's leaves. Nothing (no code
  /// emitted) when the state is not that reducer's (scalar m and l, a static
  /// vector acc of their type).
  std::optional<SmallVector<SmallVector<Value>>> softmaxBlocks(const ir::Op &op, ArrayRef<Frame *> frames,
                                                               Value lo, Value hi,
                                                               ArrayRef<SmallVector<Value>> inits);

  /// Lanes of a comprehension's last axis (docs/importer.md, "Lanes"):
  /// `lanes` consecutive elements whose bodies fold the same keys with
  /// std.nn's online softmax, the key rows they read naming the axis only
  /// as `h / lanes` (grouped-query attention: the query heads of one KV
  /// head).
  struct FoldLanes {
    const ir::Op *op = nullptr; // the reduction in the comprehension's body
    int64_t lanes = 1;
  };
  /// The lanes of a comprehension over `ds`, or nothing: the target folds
  /// the online softmax in blocks, the body is ops without regions around
  /// one such reduction over a dense axis whose bound does not depend on
  /// the last axis, and a divisor `h / G` (G from 2 to 8, dividing the
  /// axis's static extent) is read in the reduction's messages.
  std::optional<FoldLanes> foldLanes(const ir::Op &comp, Frame &f, const std::vector<DimV> &ds);
  /// The reduction `op` for each lane's frame: in one blocked pass where
  /// the state allows (softmaxBlocks), else lane by lane.
  std::vector<std::vector<V>> reduceLanes(const ir::Op &op, std::vector<Frame> &frames);
  /// regionPart for every lane's frame in lockstep: the k-th yielded value
  /// of each. A dense sum without a filter among the ops (a score's
  /// `sum(d: Head) q[h, d] * k[.., j, d]`) is one loop carrying every lane's
  /// sum, so the lanes' reads of one element are one read.
  std::vector<V> regionPartLanes(const ir::Region &r, ArrayRef<Frame *> frames, const std::vector<V> &args,
                                 size_t k);
  /// Whether `op` is a reduction regionPartLanes folds for all lanes in one
  /// loop: the built-in sum over one dense axis, without a filter.
  bool jammableSum(const ir::Op &op);
  /// That sum for each lane's frame, bound in each frame.
  void sumLanes(const ir::Op &op, ArrayRef<Frame *> frames);
  /// A lane's index of the last axis (`h0 + r`, h0 a multiple of G) to
  /// h0 / G: `h / G` of any lane is that one value, so the lanes' key row
  /// reads are the same (binary's integer division).
  struct LaneQuotient {
    Value quotient;
    int64_t lanes = 1;
  };
  llvm::DenseMap<Value, LaneQuotient> laneQuotient_;

  /// A reduction; with `range`, only that chunk of its (one, dense) axis,
  /// and the reducer's state is returned unfinalized.
  std::vector<V> reduce(const ir::Op &op, Frame &f, const ChunkRange *range);
};

} // namespace linnet::import::detail

#endif // LINNET_LIB_IMPORT_IMPORTERIMPL_H
