//===- Products.h - The whole pipeline, document dispatch, invalidation -*- C++ -*-===//
//
// Runs the binding gate, every verifier and every derived product from one
// set of inputs; reads any planning document by its schema; and tells which
// stored products are stale after an input changed. Every product records
// what it derives from (derivedFrom): comparing the stored record with the
// one the current inputs give implements the seed's invalidation table,
// transitively, because each digest covers the digests it was made from.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_PRODUCTS_H
#define LINNET_PLANNING_PRODUCTS_H

#include "linnet/Planning/Derived.h"

namespace linnet::planning {

struct PipelineInputs {
  const PortablePlan &portable;
  const Target &target;
  const Deployment &deployment;
  const ImplementationPolicy &implementations;
  const EvidencePolicy &evidence;
  const SimulationPolicy &simulation;
  std::string compilerVersion, compilerCommit;
  std::vector<std::string> flags;
  /// Implementations that replace the gate's of the same id (`impl.<task>`):
  /// an artifact's, whose code generator chose them (`build --emit ...
  /// --implementations-from DIR`), so the plans cost what that code runs.
  const std::vector<ImplementationRef> *implementationOverrides = nullptr;
};

struct Products {
  PortablePlan portable;
  ConcretePlan concrete;
  MachineIR machine;
  CostedTaskView costs;
  TimingProjection projection;
  SimulationTrace trace;
  ObservationSet observations;
  Timeline timeline;
  EvaluationReport report;
  ProgramManifest manifest;
};

/// Binds, verifies the concrete plan and MachineIR, and derives every
/// product. nullopt with `diags` when the gate or a verifier rejects.
std::optional<Products> buildProducts(const PipelineInputs &in, Diagnostics &diags);

/// The products as `linnet build --emit all -o DIR` writes them: file name
/// (e.g. "costs.json") -> document.
std::vector<std::pair<std::string, Json>> productDocuments(const Products &p);

/// The `schema` string of a document, or "".
std::string schemaOf(const Json &doc);
/// Reads a planning document of any schema with its strict reader and
/// writes it back; throws SchemaError (with a JSON path) on violations.
Json readBack(const Json &doc);
/// Runs the checks a document can have on its own (plus those against the
/// target and deployment, when given).
Diagnostics verifyDocument(const Json &doc, const Target *target = nullptr,
                           const Deployment *deployment = nullptr);

/// What a stored product derives from: input -> digest or revision.
DerivationKey derivedFrom(const Json &doc);

struct ProductStatus {
  std::string file, schema;
  bool stale = false;
  /// Observations are never stale: a changed subject needs a new revision.
  bool needsNewRevision = false;
  std::vector<std::string> changes; // "target: sha256:… -> sha256:…"
};
/// Compares each stored document with the current product of its schema.
std::vector<ProductStatus> checkProducts(const std::vector<std::pair<std::string, Json>> &stored,
                                         const Products &current);

} // namespace linnet::planning

#endif // LINNET_PLANNING_PRODUCTS_H
