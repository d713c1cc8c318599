/* A distributed artifact called through the C API (linnet-c/Runtime.h) on
 * the ranks of an MPI job: every rank opens the model; rank 0 builds a
 * graph (N entities, sources d - 1, d + 1 and d + 7 of each d) and
 * features x[n, f] = 10 n + f, calls fixture.ln's `count` and checks
 * out[d, f] = 3 * sum of x[src, f]; then a call rank 0 refuses fails on
 * every rank. Prints one line per rank. */
#include <linnet-c/Runtime.h>

#include <stdio.h>
#include <stdlib.h>

#define N 64
#define F 4

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s ARTIFACT_DIR\n", argv[0]);
    return 2;
  }
  linnet_model *model = NULL;
  if (linnet_model_open(argv[1], NULL, NULL, &model) != 0) {
    fprintf(stderr, "open: %s\n", linnet_last_error());
    return 1;
  }
  int rank = linnet_distributed_rank(), size = linnet_distributed_size();
  static int64_t rowPtr[N + 1], colIdx[3 * N], x[N * F];
  for (int d = 0; d < N; ++d) {
    rowPtr[d + 1] = 3 * (d + 1);
    colIdx[3 * d] = (d + N - 1) % N;
    colIdx[3 * d + 1] = (d + 1) % N;
    colIdx[3 * d + 2] = (d + 7) % N;
    for (int f = 0; f < F; ++f)
      x[d * F + f] = 10 * d + f;
  }
  int64_t rpShape[1] = {N + 1}, ciShape[1] = {3 * N}, xShape[2] = {N, F};
  linnet_tensor in[3] = {{LINNET_I64, 1, rpShape, rowPtr}, {LINNET_I64, 1, ciShape, colIdx},
                         {LINNET_I64, 2, xShape, x}};
  linnet_tensor out[1];
  if (linnet_model_call_distributed(model, "count", rank == 0 ? in : NULL, rank == 0 ? 3 : 0, out, 1, 60) != 0) {
    fprintf(stderr, "rank %d: call: %s\n", rank, linnet_last_error());
    return 1;
  }
  if (rank == 0) {
    int bad = out[0].rank != 2 || out[0].shape[0] != N || out[0].shape[1] != F;
    const int64_t *y = (const int64_t *)out[0].data;
    for (int d = 0; !bad && d < N; ++d)
      for (int f = 0; f < F; ++f) {
        int64_t want = 0;
        for (int k = 0; k < 3; ++k)
          want += 3 * x[colIdx[3 * d + k] * F + f];
        if (y[d * F + f] != want)
          bad = 1;
      }
    printf("rank 0 of %d: %s\n", size, bad ? "wrong results" : "results match");
  } else {
    printf("rank %d of %d: ran its rows\n", rank, size);
  }
  /* col_idx past the entities: rank 0 refuses the call, every rank fails. */
  colIdx[5] = N + 100;
  if (linnet_model_call_distributed(model, "count", rank == 0 ? in : NULL, rank == 0 ? 3 : 0, out, 1, 60) == 0)
    printf("rank %d: a bad relation was accepted\n", rank);
  else
    printf("rank %d: refused: %s\n", rank, linnet_last_error());
  fflush(stdout);
  linnet_model_close(model);
  linnet_distributed_finalize();
  return 0;
}
