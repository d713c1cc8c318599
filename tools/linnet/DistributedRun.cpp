//===- DistributedRun.cpp - `linnet run --ranks N` on OpenMPI ranks -------===//
//
// The command around LinnetDistributed's run (linnet/Distributed/Run.h):
// outside mpirun it checks the artifact and starts `mpirun -n N` on this
// same command line; in each rank it loads the model, reads the inputs
// (rank 0), calls dist::runEntry and writes the results (rank 0).
//
//===----------------------------------------------------------------------===//
#include "DistributedRun.h"

#include "RunCommand.h"

#include "linnet/Distributed/Run.h"
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/Runtime.h"
#include "linnet/Runtime/TensorFiles.h"

#include "llvm/Support/Program.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <unistd.h>

using namespace linnet;

#if LINNET_HAS_MPI

bool tool::underMpirun() { return dist::underLauncher(); }

int tool::launchUnderMpirun(const std::string &artifact, int64_t ranks) {
  // The artifact's plan decides the rank count: read it (through its
  // manifest, as a load does) before starting any process.
  {
    std::string error, text;
    std::unique_ptr<rt::VerifiedArtifact> art = rt::VerifiedArtifact::open(artifact, error);
    rt::ArtifactInfo info;
    if (!art || !art->read("runtime.json", text, error) || !rt::parseArtifactInfo(text, info, error)) {
      std::cerr << fmt::format("linnet run: error: {}\n", error);
      return 1;
    }
    if (info.cpu)
      if (std::string why = rt::checkHostCpu(*info.cpu); !why.empty()) {
        std::cerr << fmt::format("linnet run: error: {}: cannot run on this machine: {}\n", artifact, why);
        return 1;
      }
    if (std::string why = dist::rankMismatch(info, artifact, ranks); !why.empty()) {
      std::cerr << fmt::format("linnet run: error: {}\n", why);
      return 2;
    }
  }
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> self;
  for (std::string a; std::getline(in, a, '\0');)
    self.push_back(a);
  llvm::ErrorOr<std::string> mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun) {
    std::cerr << "linnet run: error: --ranks needs OpenMPI's mpirun on PATH (Debian: openmpi-bin)\n";
    return 1;
  }
  std::vector<std::string> argv = {*mpirun, "-n", std::to_string(ranks), "--oversubscribe", "--bind-to", "none"};
  if (geteuid() == 0) {
    // mpirun and MPI_Init in each rank refuse root unless told twice.
    argv.push_back("--allow-run-as-root");
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  // mpirun passes only some of the environment to the ranks: linnet's own
  // settings (LINNET_*) and the OpenMP ones (OMP_*) go explicitly.
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "LINNET_", 7) == 0 || std::strncmp(*e, "OMP_", 4) == 0) {
      std::string kv = *e;
      argv.push_back("-x");
      argv.push_back(kv.substr(0, kv.find('=')));
    }
  char self_exe[4096];
  ssize_t len = ::readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  argv.push_back(len > 0 ? std::string(self_exe, size_t(len)) : std::string("/proc/self/exe"));
  argv.insert(argv.end(), self.begin() + std::min<size_t>(1, self.size()), self.end());
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(argv[0], args, std::nullopt, {}, 0, 0, &message);
  if (rc < 0) {
    std::cerr << fmt::format("linnet run: error: mpirun failed: {}\n", message);
    return 1;
  }
  if (rc != 0) {
    std::cerr << fmt::format("linnet run: error: the run on {} ranks failed (mpirun exit status {}; the ranks' "
                             "messages are above)\n",
                             ranks, rc);
    return 1;
  }
  return 0;
}

int tool::runDistributed(const DistributedRunOptions &o) {
  if (!dist::init()) {
    std::cerr << "linnet run: error: MPI could not start\n";
    return 1;
  }
  auto abortAll = [](const std::string &what) { dist::abort("linnet run", what); };
  if (dist::size() != o.ranks)
    abortAll(fmt::format("mpirun started {} ranks, --ranks says {}", dist::size(), o.ranks));
  // Every rank loads the artifact and the weights (parameters are whole on
  // each rank); a failure on any rank ends the run.
  std::unique_ptr<rt::Model> model = tool::loadArtifact(o.artifact, o.weights, o.binding, "run");
  if (!model)
    abortAll("cannot load the artifact (above)");
  dist::RunOptions ro;
  ro.entry = o.entry;
  ro.repeat = o.repeat;
  ro.timeoutSeconds = o.timeoutSeconds;
  ro.stats = o.stats;
  // Rank 0 reads the inputs (and the partition); every rank learns whether
  // it could, and a failure ends each one with exit status 1.
  std::vector<rt::OwnedTensor> inputs;
  int readOk = 1;
  if (dist::rank() == 0) {
    std::optional<std::vector<rt::OwnedTensor>> in = tool::readEntryInputs(*model, o.entry, o.inputs, "run");
    if (in)
      inputs = std::move(*in);
    else
      readOk = 0;
    if (readOk && !o.partition.empty()) {
      std::string err;
      std::optional<rt::OwnedTensor> pv = rt::readNpy(o.partition, err);
      if (!pv || pv->dtype != rt::DType::I64 || pv->shape.size() != 1) {
        std::cerr << "linnet run: error: "
                  << (pv ? o.partition + ": expected an i64 vector of each entity's part" : err) << "\n";
        readOk = 0;
      } else {
        ro.owner.assign(reinterpret_cast<const int64_t *>(pv->data.data()),
                        reinterpret_cast<const int64_t *>(pv->data.data()) + pv->shape[0]);
      }
    }
  }
  if (dist::agreeOnStatus(readOk ? 0 : 1) != 0) {
    dist::finalize();
    return 1;
  }
  std::vector<rt::OwnedTensor> results;
  std::string error;
  if (!dist::runEntry(*model, o.artifact, ro, inputs, results, error)) {
    if (dist::rank() == 0)
      std::cerr << fmt::format("linnet run: error: {}\n", error) << std::flush;
    dist::finalize();
    return 1;
  }
  int rc = 0;
  if (dist::rank() == 0)
    for (size_t r = 0; r < o.outputs.size() && r < results.size(); ++r)
      if (!rt::writeNpy(o.outputs[r], results[r].view(), error)) {
        std::cerr << "linnet run: error: " << error << "\n";
        rc = 1;
      }
  rc = dist::agreeOnStatus(rc);
  dist::finalize();
  return rc;
}

#else // !LINNET_HAS_MPI

bool tool::underMpirun() { return false; }

int tool::launchUnderMpirun(const std::string &, int64_t) {
  std::cerr << "linnet run: error: --ranks: this linnet was built without MPI (LINNET_DISTRIBUTED=OFF, or no "
               "MPI found: apt-get install libopenmpi-dev openmpi-bin and configure again)\n";
  return 1;
}

int tool::runDistributed(const DistributedRunOptions &) { return launchUnderMpirun("", 0); }

#endif
