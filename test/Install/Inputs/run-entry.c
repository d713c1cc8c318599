/* Loads a ProgramArtifact with its weights through the installed C API
 * (linnet-c/Runtime.h, liblinnet_runtime.so), calls `forward` on a
 * [2, 3] f32 input 0.5, 1, 1.5, ... and prints each result value. */
#include <linnet-c/Runtime.h>

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ARTIFACT_DIR WEIGHTS.safetensors\n", argv[0]);
    return 2;
  }
  linnet_model *model = NULL;
  if (linnet_model_open(argv[1], argv[2], NULL, &model) != 0) {
    fprintf(stderr, "open: %s\n", linnet_last_error());
    return 1;
  }
  float x[6];
  for (int i = 0; i < 6; ++i)
    x[i] = 0.5f * (float)(i + 1);
  int64_t shape[2] = {2, 3};
  linnet_tensor in = {LINNET_F32, 2, shape, x};
  linnet_tensor out[1];
  if (linnet_model_num_results(model, "forward") != 1 ||
      linnet_model_call(model, "forward", &in, 1, out, 1) != 0) {
    fprintf(stderr, "call: %s\n", linnet_last_error());
    linnet_model_close(model);
    return 1;
  }
  int64_t n = 1;
  printf("shape");
  for (int32_t d = 0; d < out[0].rank; ++d) {
    printf(" %lld", (long long)out[0].shape[d]);
    n *= out[0].shape[d];
  }
  printf("\n");
  for (int64_t i = 0; i < n; ++i)
    printf("%.6e\n", (double)((const float *)out[0].data)[i]);
  linnet_model_close(model);
  return 0;
}
