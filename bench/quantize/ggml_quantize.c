// Quantizes rows of f32 with ggml itself (ggml_quantize_chunk, no importance
// matrix): ggml_quantize TYPE_ID ROWS PER_ROW IN.f32 OUT.bin. Built and run by
// ggml-identity.sh against node-llama-cpp's prebuilt libggml-base.
#include "ggml.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int type = atoi(argv[1]); long rows = atol(argv[2]), per = atol(argv[3]);
  float *x = malloc(rows * per * 4); FILE *f = fopen(argv[4], "rb"); fread(x, 4, rows * per, f); fclose(f);
  ggml_quantize_init(type);
  size_t sz = ggml_row_size(type, per) * rows; void *out = malloc(sz);
  ggml_quantize_chunk(type, x, out, 0, rows, per, NULL);
  f = fopen(argv[5], "wb"); fwrite(out, 1, sz, f); fclose(f); return 0;
}
