/* A hand-written "compiled model" for the runtime tests: it implements the
 * linnet-cpu-packed-v1 ABI (docs/runtime-abi.md) for runtime.json beside it.
 *   forward(x: [B, 3]) -> [B, 2]:  y = x @ lin.weight^T + scale, calls += 1
 *   calls() -> [1]: the number of forward calls so far (state) */
#include <stdint.h>

typedef struct { void *allocated; void *aligned; int64_t offset; } D0;
typedef struct { void *allocated; void *aligned; int64_t offset; int64_t sizes[1]; int64_t strides[1]; } D1;
typedef struct { void *allocated; void *aligned; int64_t offset; int64_t sizes[2]; int64_t strides[2]; } D2;

void linnet_entry_forward(void **args) {
  D2 *x = args[0], *w = args[1];
  D1 *scale = args[2], *calls = args[3];
  D2 *y = args[4];
  const float *xp = x->aligned, *wp = w->aligned, *sp = scale->aligned;
  float *yp = y->aligned;
  for (int64_t b = 0; b < x->sizes[0]; ++b)
    for (int64_t o = 0; o < w->sizes[0]; ++o) {
      float acc = sp[0];
      for (int64_t i = 0; i < x->sizes[1]; ++i)
        acc += xp[b * x->strides[0] + i] * wp[o * w->strides[0] + i];
      yp[b * y->strides[0] + o] = acc;
    }
  ((int64_t *)calls->aligned)[0] += 1;
}

void linnet_entry_calls(void **args) {
  D1 *calls = args[2], *out = args[3];
  ((int64_t *)out->aligned)[0] = ((int64_t *)calls->aligned)[0];
}
