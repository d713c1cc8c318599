/* A fake language model for `linnet generate` tests (ABI linnet-cpu-packed-v1):
 * the cache (state) holds the tokens seen; the next token is the sum of all
 * tokens so far, modulo the vocabulary size (8). No weights. */
#include <stdint.h>

typedef struct { void *allocated; void *aligned; int64_t offset; } D0;
typedef struct { void *allocated; void *aligned; int64_t offset; int64_t sizes[1]; int64_t strides[1]; } D1;
typedef struct { void *allocated; void *aligned; int64_t offset; int64_t sizes[2]; int64_t strides[2]; } D2;

static void predict(const int64_t *cache, int64_t upto, float *row) {
  int64_t sum = 0;
  for (int64_t i = 0; i < upto; ++i)
    sum += cache[i];
  for (int v = 0; v < 8; ++v)
    row[v] = v == sum % 8 ? 1.0f : 0.0f;
}

void linnet_entry_prefill(void **args) {
  D1 *tokens = args[0], *cache = args[1];
  D2 *logits = args[2];
  int64_t *c = cache->aligned;
  const int64_t *t = tokens->aligned;
  for (int64_t s = 0; s < tokens->sizes[0]; ++s)
    c[s] = t[s];
  for (int64_t s = 0; s < tokens->sizes[0]; ++s)
    predict(c, s + 1, (float *)logits->aligned + s * 8);
}

void linnet_entry_decode(void **args) {
  D1 *token = args[0], *cache = args[2];
  D0 *pos = args[1];
  D2 *logits = args[3];
  int64_t p = *(int64_t *)pos->aligned;
  ((int64_t *)cache->aligned)[p] = *(int64_t *)token->aligned;
  predict(cache->aligned, p + 1, logits->aligned);
}
