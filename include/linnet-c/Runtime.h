/*===- linnet-c/Runtime.h - C API of the linnet runtime -----------*- C -*-===*\
|*                                                                            *|
|* Load a compiled linnet model (a ProgramArtifact directory) with its        *|
|* weights, and call its entries. Every function that can fail returns 0 on   *|
|* success and non-zero on failure; linnet_last_error() then describes it.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef LINNET_C_RUNTIME_H
#define LINNET_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct linnet_model linnet_model;

typedef enum {
  LINNET_BOOL, LINNET_U8, LINNET_I8, LINNET_I16, LINNET_I32, LINNET_I64,
  LINNET_F16, LINNET_BF16, LINNET_F32, LINNET_F64
} linnet_dtype;

/* A dense row-major tensor. For results, the runtime fills `rank`, `shape`
 * and `data`, which stay valid until the next call on the same model or
 * until linnet_model_close. */
typedef struct {
  linnet_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  void *data;
} linnet_tensor;

/* Loads the artifact in `artifact_dir` with weights from `weights_path`
 * (.safetensors). `binding_path` may be NULL. */
int linnet_model_open(const char *artifact_dir, const char *weights_path,
                      const char *binding_path, linnet_model **out);
void linnet_model_close(linnet_model *model);

/* Calls an entry. `outputs` must have room for the entry's result count. */
int linnet_model_call(linnet_model *model, const char *entry, const linnet_tensor *inputs,
                      size_t num_inputs, linnet_tensor *outputs, size_t num_outputs);

size_t linnet_model_num_results(const linnet_model *model, const char *entry);

/* Distributed artifacts (`linnet build --ranks N`), in a program an MPI
 * launcher starts once a rank (mpirun -n N): every rank opens the model and
 * calls the entry; rank 0 passes the inputs (the others NULL, 0) and gets
 * the gathered results in `outputs` (the others their own rows). MPI is
 * initialized when the program has not; a rank that fails or waits longer
 * than `timeout_seconds` ends every rank. Non-zero on every rank when rank 0
 * refused the inputs, or when this runtime was built without MPI. */
int linnet_model_call_distributed(linnet_model *model, const char *entry, const linnet_tensor *inputs,
                                  size_t num_inputs, linnet_tensor *outputs, size_t num_outputs,
                                  double timeout_seconds);
/* This process's rank and the job's size (-1 without MPI). */
int linnet_distributed_rank(void);
int linnet_distributed_size(void);
/* Ends MPI for this process (after its last distributed call). */
void linnet_distributed_finalize(void);

/* The message of the last failure on this thread. */
const char *linnet_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* LINNET_C_RUNTIME_H */
