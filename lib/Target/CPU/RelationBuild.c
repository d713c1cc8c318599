/* RelationBuild.c - neighbour relations (kNN, radius) from coordinates, CSR.
 *
 * Compiled from source into generated model libraries by the system C
 * compiler (CPUCodegen.cpp), so it is plain C99 on libc/libm only. The one
 * exported symbol is _mlir_ciface_linnet_relation_build.
 *
 * Results are bit-identical to the interpreter's brute force: squared
 * distances are accumulated axis by axis in the same order (the library is
 * built with -ffp-contract=off), NaN distances rank as +infinity, and rows
 * keep the first k candidates in ascending (distance, source index) order.
 *
 * Large inputs go through a uniform grid over the first min(D, 3) axes (src
 * points counting-sorted by cell, coordinates copied contiguously); queries
 * visit cells nearest first and stop on a lower bound. The grid only prunes:
 * every bound is conservative (rounding slack included) and ties are broken
 * by index like the brute force, which runs where a bound could fail
 * (non-finite coordinates, no extent) or the input is small.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} linnet_memref2_f64;
typedef struct {
  int64_t *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} linnet_memref1_i64;

/* LLVM's OpenMP runtime, present when the model library is parallel. Weak,
 * so that without it everything runs serially; its worker threads are reused
 * instead of starting pthreads that would fight its spinning idle threads. */
typedef void (*rb_microtask)(int32_t *, int32_t *, ...);
extern void __kmpc_fork_call(void *loc, int32_t argc, rb_microtask fn, ...)
    __attribute__((weak));

/* A host that has no OpenMP runtime but threads of its own (the Python
 * module, whose process may hold another OpenMP runtime) defines this: it
 * runs fn(arg) on each of its threads and returns when all are done. */
extern void linnet_relation_build_parallel(void (*fn)(void *), void *arg) __attribute__((weak));

typedef struct {
  int32_t reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} rb_ident;
static rb_ident rb_loc = {0, 2 /* KMP_IDENT_KMPC */, 0, 0,
                          ";unknown;unknown;0;0;;"};

/* Rows are handed out in chunks from an atomic counter: clustered data makes
 * row costs very uneven, so static partitioning would leave a core idle. */
#define RB_CHUNK 256
/* Relative slack on lower bounds, far above the rounding of a D-term sum. */
#define RB_REL 1e-9
/* Widening of the previous row's k-th squared distance used as the next
 * row's initial filter (rows go in cell order, so they are neighbours). */
#define RB_GUESS 1.5
/* kNN cells hold about RB_KNN_FILL * k points (at least 2). */
#define RB_KNN_FILL 0.4
/* Below this a squared bound may have lost its meaning to underflow. */
#define RB_TINY 1e-290

/* Candidates of one row. Appending is branch-free and filtered by a
 * threshold w; when the buffer fills, a selection keeps the best cap and
 * tightens w to the cap-th key. Far cheaper than keeping a sorted list,
 * whose insertions mispredict on every improvement. */
typedef struct {
  double s;
  int64_t j;
} rb_cand;

typedef struct {
  rb_cand *buf;
  int64_t n, cap, size; /* size >= cap + 1: the buffer's length */
  double limit;         /* keys above it never qualify (radius: r^2) */
  double w;             /* current threshold, <= limit */
} rb_set;

static inline int rb_less(const rb_cand *a, const rb_cand *b) {
  /* Bitwise, not short-circuit: one hard-to-predict branch, not two. */
  return (a->s < b->s) | ((a->s == b->s) & (a->j < b->j));
}

static void rb_isort(rb_cand *b, int64_t n) {
  for (int64_t x = 1; x < n; ++x) {
    rb_cand v = b[x];
    int64_t y = x;
    while (y > 0 && rb_less(&v, &b[y - 1])) {
      b[y] = b[y - 1];
      --y;
    }
    b[y] = v;
  }
}

/* Hoare partition of b[lo..hi] around a median of three; indices are
 * distinct, so keys compare as a strict total order. */
static void rb_partition(rb_cand *b, int64_t lo, int64_t hi, int64_t *pi,
                         int64_t *pj) {
  int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
  rb_cand t, piv;
  if (rb_less(&b[mid], &b[lo])) {
    t = b[mid]; b[mid] = b[lo]; b[lo] = t;
  }
  if (rb_less(&b[hi], &b[mid])) {
    t = b[hi]; b[hi] = b[mid]; b[mid] = t;
    if (rb_less(&b[mid], &b[lo])) {
      t = b[mid]; b[mid] = b[lo]; b[lo] = t;
    }
  }
  piv = b[mid];
  while (i <= j) {
    while (rb_less(&b[i], &piv))
      ++i;
    while (rb_less(&piv, &b[j]))
      --j;
    if (i <= j) {
      t = b[i]; b[i] = b[j]; b[j] = t;
      ++i;
      --j;
    }
  }
  *pi = i;
  *pj = j;
}

/* Moves the m smallest of b[0..n) to b[0..m), the m-th smallest last. */
static void rb_select(rb_cand *b, int64_t n, int64_t m) {
  int64_t lo = 0, hi = n - 1, target = m - 1, i, j;
  while (hi - lo > 16) {
    rb_partition(b, lo, hi, &i, &j);
    if (target <= j)
      hi = j;
    else if (target >= i)
      lo = i;
    else
      return;
  }
  rb_isort(b + lo, hi - lo + 1);
}

static void rb_sort(rb_cand *b, int64_t n) {
  int64_t i, j;
  while (n > 24) {
    rb_partition(b, 0, n - 1, &i, &j);
    /* Recurse into the smaller side, loop on the larger. */
    if (j + 1 < n - i) {
      rb_sort(b, j + 1);
      b += i;
      n -= i;
    } else {
      rb_sort(b + i, n - i);
      n = j + 1;
    }
  }
  rb_isort(b, n);
}

/* Keeps the best cap candidates and sets w to the worst of them. */
static void rb_tighten(rb_set *st) {
  double w;
  if (st->n < st->cap)
    return;
  if (st->n > st->cap) {
    rb_select(st->buf, st->n, st->cap);
    st->n = st->cap;
    w = st->buf[st->cap - 1].s;
  } else {
    w = st->buf[0].s;
    for (int64_t x = 1; x < st->n; ++x)
      w = st->buf[x].s > w ? st->buf[x].s : w;
  }
  st->w = w < st->limit ? w : st->limit;
}

/* Appends (s, j) unless s > w or j is excluded (iex); no branch on s. */
#define RB_PUSH(buf, n, size, w, st, s, j, iex)                                \
  do {                                                                         \
    (buf)[n].s = (s);                                                          \
    (buf)[n].j = (j);                                                          \
    (n) += ((s) <= (w)) & ((j) != (iex));                                      \
    if ((n) == (size)) {                                                       \
      (st)->n = (n);                                                           \
      rb_tighten(st);                                                          \
      (n) = (st)->n;                                                           \
      (w) = (st)->w;                                                           \
    }                                                                          \
  } while (0)

typedef struct {
  /* Inputs. */
  const double *dst, *src;
  int64_t doff, ds0, ds1, soff, ss0, ss1;
  int64_t M, N, D, k, lmax;
  int kind, excl;
  double r, r2;
  int64_t *col, *rp;
  int64_t coff, cs, roff, rs;
  /* Grid over src in local coordinates u = x - lo (grid != 0). */
  int grid, G, self, nna;
  int ax[3], na_ax[3];
  int64_t n[3];
  double lo[3], ext[3], na_lo[3], h, extmax;
  const double *sp;      /* src coordinates in cell order, D per point */
  const int64_t *sidx;   /* original index of each sorted point */
  const int64_t *cstart; /* first sorted point of each cell, ncells + 1 */
  const int64_t *order;  /* dst rows in processing order, or NULL */
  int64_t next;          /* atomic: next position to hand out */
} rb_ctx;

static inline double rb_dst(const rb_ctx *c, int64_t i, int64_t a) {
  return c->dst[c->doff + i * c->ds0 + a * c->ds1];
}
static inline double rb_src(const rb_ctx *c, int64_t j, int64_t a) {
  return c->src[c->soff + j * c->ss0 + a * c->ss1];
}

/* Number of candidates row i can have at most (kNN: exactly). */
static inline int64_t rb_need(const rb_ctx *c, int64_t i) {
  int64_t avail = c->N - ((c->excl && i < c->N) ? 1 : 0);
  return avail < c->k ? avail : c->k;
}

/* Sorts the row's best candidates into place at col[i * k ...]; the count
 * goes where row_ptr[i + 1] will be (the prefix sum follows). */
static void rb_emit(const rb_ctx *c, int64_t i, rb_set *st) {
  int64_t base = c->coff + i * c->k * c->cs;
  if (st->n > st->cap) {
    rb_select(st->buf, st->n, st->cap);
    st->n = st->cap;
  }
  rb_sort(st->buf, st->n);
  for (int64_t t = 0; t < st->n; ++t)
    c->col[base + t * c->cs] = st->buf[t].j;
  c->rp[c->roff + (i + 1) * c->rs] = st->n;
}

/* Brute force on the strided views; NaN ranks as +inf for kNN and is never
 * within a radius (the threshold test is false for NaN). */
static void rb_row_brute(const rb_ctx *c, int64_t i, const double *q,
                         rb_set *st) {
  rb_cand *buf = st->buf;
  int64_t n = st->n, size = st->size, iex = c->excl ? i : -1;
  double w = st->w;
  for (int64_t j = 0; j < c->N; ++j) {
    double s = 0.0;
    for (int64_t a = 0; a < c->D; ++a) {
      double t = q[a] - rb_src(c, j, a);
      t = t * t;
      s = s + t;
    }
    if (c->kind == 0 && s != s)
      s = INFINITY;
    RB_PUSH(buf, n, size, w, st, s, j, iex);
  }
  st->n = n;
  st->w = w;
}

/* Last resort when even the per-thread scratch cannot be allocated: select
 * the candidates one at a time in (key, index) order, writing straight into
 * the output. k passes over the sources, but no memory. */
static void rb_row_select(const rb_ctx *c, int64_t i) {
  int64_t need = rb_need(c, i), cnt = 0, pk_j = -1;
  int64_t base = c->coff + i * c->k * c->cs;
  double pk = -INFINITY;
  double q[16];
  int small = c->D <= 16;
  if (small)
    for (int64_t a = 0; a < c->D; ++a)
      q[a] = rb_dst(c, i, a);
  while (cnt < need) {
    int64_t bj = -1;
    double bk = 0.0;
    for (int64_t j = 0; j < c->N; ++j) {
      double s = 0.0;
      if (c->excl && j == i)
        continue;
      for (int64_t a = 0; a < c->D; ++a) {
        double t = (small ? q[a] : rb_dst(c, i, a)) - rb_src(c, j, a);
        t = t * t;
        s = s + t;
      }
      if (c->kind == 1) {
        if (!(s <= c->r2))
          continue;
      } else if (s != s) {
        s = INFINITY;
      }
      if (s < pk || (s == pk && j <= pk_j))
        continue;
      if (bj < 0 || s < bk || (s == bk && j < bj)) {
        bk = s;
        bj = j;
      }
    }
    if (bj < 0)
      break;
    c->col[base + cnt * c->cs] = bj;
    ++cnt;
    pk = bk;
    pk_j = bj;
  }
  c->rp[c->roff + (i + 1) * c->rs] = cnt;
}

/* ---- Grid search ------------------------------------------------------- */

/* Cell of local coordinate u on an axis with n cells. Clamped in double so
 * that it is monotone in u (the radius range relies on that) and safe for
 * infinite u. */
static inline int64_t rb_cell(double u, double h, int64_t n) {
  double f = floor(u / h);
  if (!(f >= 0.0))
    return 0;
  if (f > (double)(n - 1))
    return n - 1;
  return (int64_t)f;
}

/* Lower bound on |u_p - u| for points p of cell `cell` (local coordinate u),
 * less the rounding slack. */
static inline double rb_gap(double u, int64_t cell, double h, double slack) {
  double a = (double)cell * h, b = a + h, g = 0.0;
  if (u < a)
    g = a - u;
  else if (u > b)
    g = u - b;
  g -= slack;
  return g > 0.0 ? g : 0.0;
}

/* Scans sorted points [p0, p1) into st. */
static inline void rb_scan(const rb_ctx *c, int64_t iex, const double *q,
                           int64_t p0, int64_t p1, rb_set *st) {
  const double *sp = c->sp;
  const int64_t *sidx = c->sidx;
  rb_cand *buf = st->buf;
  int64_t n = st->n, size = st->size, D = c->D;
  double w = st->w;
  if (D == 3) {
    double q0 = q[0], q1 = q[1], q2 = q[2];
    for (int64_t p = p0; p < p1; ++p) {
      const double *x = sp + 3 * p;
      double t0 = q0 - x[0], t1 = q1 - x[1], t2 = q2 - x[2];
      double s = 0.0;
      int64_t j = sidx[p];
      t0 = t0 * t0;
      s = s + t0;
      t1 = t1 * t1;
      s = s + t1;
      t2 = t2 * t2;
      s = s + t2;
      RB_PUSH(buf, n, size, w, st, s, j, iex);
    }
  } else if (D == 2) {
    double q0 = q[0], q1 = q[1];
    for (int64_t p = p0; p < p1; ++p) {
      const double *x = sp + 2 * p;
      double t0 = q0 - x[0], t1 = q1 - x[1];
      double s = 0.0;
      int64_t j = sidx[p];
      t0 = t0 * t0;
      s = s + t0;
      t1 = t1 * t1;
      s = s + t1;
      RB_PUSH(buf, n, size, w, st, s, j, iex);
    }
  } else {
    for (int64_t p = p0; p < p1; ++p) {
      const double *x = sp + D * p;
      double s = 0.0;
      int64_t j = sidx[p];
      for (int64_t a = 0; a < D; ++a) {
        double t = q[a] - x[a];
        t = t * t;
        s = s + t;
      }
      RB_PUSH(buf, n, size, w, st, s, j, iex);
    }
  }
  st->n = n;
  st->w = w;
}

/* Per-query geometry in grid coordinates. */
typedef struct {
  double u[3];   /* local coordinate per grid axis (unclamped) */
  int64_t c[3];  /* cell of the clamped position */
  double base2;  /* squared distance over non-gridded leading axes */
  double slack;  /* absolute rounding slack for gaps */
} rb_query;

static void rb_query_init(const rb_ctx *c, const double *q, rb_query *g) {
  double umax = 0.0;
  for (int a = 0; a < 3; ++a) {
    g->u[a] = 0.0;
    g->c[a] = 0;
  }
  for (int a = 0; a < c->G; ++a) {
    double u = q[c->ax[a]] - c->lo[a];
    double cu = u < 0.0 ? 0.0 : (u > c->ext[a] ? c->ext[a] : u);
    g->u[a] = u;
    g->c[a] = rb_cell(cu, c->h, c->n[a]);
    if (fabs(u) > umax)
      umax = fabs(u);
  }
  /* Every src point shares the coordinate of a zero-extent axis. */
  g->base2 = 0.0;
  for (int a = 0; a < c->nna; ++a) {
    double t = q[c->na_ax[a]] - c->na_lo[a];
    g->base2 += t * t;
  }
  g->slack = RB_REL * (c->h + c->extmax + umax);
}

/* Scans cells x0..x1 of the row (y, z), first dropping end cells whose
 * lower bound exceeds the threshold (strictly, so that ties still enter). */
static inline void rb_row_run(const rb_ctx *c, int64_t iex, const double *q,
                              const rb_query *g, int64_t y, int64_t z,
                              int64_t x0, int64_t x1, double yz2,
                              rb_set *st) {
  int64_t rowbase = (z * c->n[1] + y) * c->n[0];
  double w = st->w;
  while (x0 <= x1) {
    double gx = rb_gap(g->u[0], x0, c->h, g->slack);
    double lb = (gx * gx + yz2) * (1.0 - RB_REL);
    if (!(lb > w && lb > RB_TINY))
      break;
    ++x0;
  }
  while (x1 >= x0) {
    double gx = rb_gap(g->u[0], x1, c->h, g->slack);
    double lb = (gx * gx + yz2) * (1.0 - RB_REL);
    if (!(lb > w && lb > RB_TINY))
      break;
    --x1;
  }
  if (x0 <= x1)
    rb_scan(c, iex, q, c->cstart[rowbase + x0], c->cstart[rowbase + x1 + 1],
            st);
}

/* Lower bound over the (y, z) offset of a row of cells, or -1 to skip it. */
static inline double rb_yz2(const rb_ctx *c, const rb_query *g, int64_t y,
                            int64_t z, double w) {
  double gy = c->G > 1 ? rb_gap(g->u[1], y, c->h, g->slack) : 0.0;
  double gz = c->G > 2 ? rb_gap(g->u[2], z, c->h, g->slack) : 0.0;
  double yz2 = gy * gy + gz * gz + g->base2;
  double lb = yz2 * (1.0 - RB_REL);
  if (lb > w && lb > RB_TINY)
    return -1.0;
  return yz2;
}

/* kNN by rings of cells around the query's cell. `guess` (the previous,
 * nearby query's k-th key, widened) filters candidates from the start, which
 * saves most selections and prunes cells early; if fewer than cap candidates
 * pass it, the row starts over unfiltered. Returns the k-th key or +inf. */
static double rb_row_knn(const rb_ctx *c, int64_t iex, const double *q,
                         rb_set *st, double guess) {
  rb_query g;
  double h = c->h, mmin = INFINITY, clamp2 = 0.0;
  int64_t rhomax = 0;
  rb_query_init(c, q, &g);
  for (int a = 0; a < c->G; ++a) {
    double cu = g.u[a] < 0.0 ? 0.0 : (g.u[a] > c->ext[a] ? c->ext[a] : g.u[a]);
    double d = fabs(g.u[a] - cu) - g.slack;
    double off = cu - (double)g.c[a] * h;
    double m = off < h - off ? off : h - off;
    if (d > 0.0)
      clamp2 += d * d;
    if (m < mmin)
      mmin = m;
    if (g.c[a] > rhomax)
      rhomax = g.c[a];
    if (c->n[a] - 1 - g.c[a] > rhomax)
      rhomax = c->n[a] - 1 - g.c[a];
  }
  if (mmin < 0.0)
    mmin = 0.0;
  if (!(guess < st->limit))
    guess = st->limit;
  st->w = guess;
  int64_t cx = g.c[0], cy = g.c[1], cz = g.c[2];
  for (int64_t rho = 0;; ++rho) {
    int64_t z0 = cz - rho, z1 = cz + rho, y0 = cy - rho, y1 = cy + rho;
    int64_t x0 = cx - rho, x1 = cx + rho;
    int64_t zl = z0 < 0 ? 0 : z0, zh = z1 >= c->n[2] ? c->n[2] - 1 : z1;
    int64_t yl = y0 < 0 ? 0 : y0, yh = y1 >= c->n[1] ? c->n[1] - 1 : y1;
    int64_t xl = x0 < 0 ? 0 : x0, xh = x1 >= c->n[0] ? c->n[0] - 1 : x1;
    double lin, lb;
    for (int64_t z = zl; z <= zh; ++z) {
      for (int64_t y = yl; y <= yh; ++y) {
        double yz2 = rb_yz2(c, &g, y, z, st->w);
        if (yz2 < 0.0)
          continue;
        if (z == z0 || z == z1 || y == y0 || y == y1) {
          rb_row_run(c, iex, q, &g, y, z, xl, xh, yz2, st);
        } else {
          if (x0 >= 0)
            rb_row_run(c, iex, q, &g, y, z, x0, x0, yz2, st);
          if (x1 < c->n[0])
            rb_row_run(c, iex, q, &g, y, z, x1, x1, yz2, st);
        }
      }
    }
    rb_tighten(st);
    /* Every unvisited point is more than rho cells away on some axis. */
    lin = (double)rho * h + mmin - g.slack;
    if (lin < 0.0)
      lin = 0.0;
    lb = (lin * lin + clamp2 + g.base2) * (1.0 - RB_REL);
    if (st->n == st->cap) {
      if (rho >= rhomax || (lb > RB_TINY && st->w < lb))
        break;
    } else if (guess < st->limit && (rho >= rhomax || lb > guess)) {
      /* No unvisited point passes the filter and too few did: retry with a
       * wider one (4x squared), unfiltered once it stops being useful. */
      guess = rho >= rhomax || !(guess > RB_TINY) ? st->limit : 4.0 * guess;
      st->n = 0;
      st->w = guess;
      rho = -1;
    } else if (rho >= rhomax) {
      break;
    }
  }
  return st->n == st->cap ? st->w : INFINITY;
}

static void rb_row_radius(const rb_ctx *c, int64_t iex, const double *q,
                          rb_set *st) {
  rb_query g;
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  rb_query_init(c, q, &g);
  /* Cells that can hold a point within r on each axis; the padding covers
   * rounding of the distance sum and of u +- r. */
  double rr = c->r * (1.0 + RB_REL) + g.slack + 1e-150;
  for (int a = 0; a < c->G; ++a) {
    double u0 = g.u[a] - rr, u1 = g.u[a] + rr;
    if (u0 > c->ext[a] || u1 < 0.0)
      return;
    lo[a] = rb_cell(u0, c->h, c->n[a]);
    hi[a] = rb_cell(u1, c->h, c->n[a]);
  }
  for (int64_t z = lo[2]; z <= hi[2]; ++z)
    for (int64_t y = lo[1]; y <= hi[1]; ++y) {
      double yz2 = rb_yz2(c, &g, y, z, st->w);
      if (yz2 >= 0.0)
        rb_row_run(c, iex, q, &g, y, z, lo[0], hi[0], yz2, st);
    }
}

/* ---- Driver ------------------------------------------------------------ */

static void rb_worker(rb_ctx *c) {
  int64_t D = c->D, k = c->k;
  /* Room for cap candidates plus as many again between selections. */
  int64_t size = 2 * c->lmax + 32;
  rb_cand *buf = (rb_cand *)malloc((size_t)size * sizeof(rb_cand));
  double *qb = (double *)malloc((size_t)(D > 0 ? D : 1) * sizeof(double));
  int ok = buf && qb;
  double last = INFINITY; /* k-th key of the previous kNN row */
  for (;;) {
    int64_t p0 = __atomic_fetch_add(&c->next, RB_CHUNK, __ATOMIC_RELAXED);
    int64_t p1 = p0 + RB_CHUNK < c->M ? p0 + RB_CHUNK : c->M;
    if (p0 >= c->M)
      break;
    for (int64_t p = p0; p < p1; ++p) {
      int64_t i = c->order ? c->order[p] : p;
      const double *q = qb;
      rb_set st;
      if (!ok) {
        rb_row_select(c, i);
        continue;
      }
      if (c->order && p + 1 < c->M) {
        /* Rows are visited in cell order, so their output slots are
         * scattered: fetch the next one ahead. */
        int64_t nx = c->order[p + 1];
        __builtin_prefetch(&c->col[c->coff + nx * k * c->cs], 1);
        __builtin_prefetch(&c->rp[c->roff + (nx + 1) * c->rs], 1);
        if (!c->self)
          __builtin_prefetch(&c->dst[c->doff + nx * c->ds0], 0);
      }
      st.buf = buf;
      st.n = 0;
      st.cap = rb_need(c, i);
      st.size = size;
      st.limit = c->kind == 1 ? c->r2 : INFINITY;
      st.w = st.limit;
      if (st.cap > 0) {
        int64_t iex = c->excl ? i : -1;
        if (c->self && c->grid)
          q = c->sp + p * D; /* processing order is the sorted order */
        else
          for (int64_t a = 0; a < D; ++a)
            qb[a] = rb_dst(c, i, a);
        if (!c->grid)
          rb_row_brute(c, i, q, &st);
        else if (c->kind == 0)
          last = rb_row_knn(c, iex, q, &st, last * RB_GUESS);
        else
          rb_row_radius(c, iex, q, &st);
      }
      rb_emit(c, i, &st);
    }
  }
  free(buf);
  free(qb);
}

static void rb_microtask_fn(int32_t *gtid, int32_t *btid, void *arg) {
  (void)gtid;
  (void)btid;
  rb_worker((rb_ctx *)arg);
}

static void rb_worker_fn(void *arg) { rb_worker((rb_ctx *)arg); }

static void rb_run_rows(rb_ctx *c) {
  c->next = 0;
  /* Forking costs more than a few chunks of cheap rows. */
  int big = c->M > RB_CHUNK && (double)c->M * (double)(c->N > 64 ? 64 : c->N) > 65536.0;
  if (big && __kmpc_fork_call)
    __kmpc_fork_call(&rb_loc, 1, (rb_microtask)rb_microtask_fn, (void *)c);
  else if (big && linnet_relation_build_parallel)
    linnet_relation_build_parallel(rb_worker_fn, (void *)c);
  else
    rb_worker(c);
}

static double rb_ncells(const rb_ctx *c, double h) {
  double t = 1.0;
  for (int a = 0; a < c->G; ++a)
    t *= floor(c->ext[a] / h) + 1.0;
  return t;
}

/* Smallest convenient h >= h0 whose grid has at most cap cells (0 if none). */
static double rb_fit_cap(const rb_ctx *c, double h0, double cap) {
  double h = h0;
  for (int it = 0; it < 4000 && isfinite(h) && h > 0.0; ++it) {
    if (rb_ncells(c, h) <= cap)
      return h;
    h *= 1.0625;
  }
  return 0.0;
}

static void rb_set_n(rb_ctx *c) {
  for (int a = 0; a < 3; ++a)
    c->n[a] = a < c->G ? (int64_t)(floor(c->ext[a] / c->h) + 1.0) : 1;
}

static int64_t rb_src_cell(const rb_ctx *c, int64_t j) {
  int64_t cell = 0;
  for (int a = c->G - 1; a >= 0; --a) {
    double u = rb_src(c, j, c->ax[a]) - c->lo[a];
    cell = cell * c->n[a] + rb_cell(u, c->h, c->n[a]);
  }
  return cell;
}

/* Cell of a dst row, its position clamped into the grid box. */
static int64_t rb_dst_cell(const rb_ctx *c, int64_t i) {
  int64_t cell = 0;
  for (int a = c->G - 1; a >= 0; --a) {
    double u = rb_dst(c, i, c->ax[a]) - c->lo[a];
    cell = cell * c->n[a] + rb_cell(u, c->h, c->n[a]);
  }
  return cell;
}

typedef struct {
  double *sp;
  int64_t *sidx, *cstart, *cell, *order;
} rb_grid_mem;

static void rb_grid_free(rb_grid_mem *m) {
  free(m->sp);
  free(m->sidx);
  free(m->cstart);
  free(m->cell);
  free(m->order);
}

/* Builds the grid; returns 0 (and leaves c->grid == 0) to use brute force. */
static int rb_grid_build(rb_ctx *c, rb_grid_mem *m) {
  int64_t N = c->N, D = c->D, M = c->M, P = D < 3 ? D : 3;
  double cap = 2.0 * (double)N + 64.0, logv = 0.0, h;
  int64_t ncells;
  memset(m, 0, sizeof(*m));
  /* r * r overflowed: every distance (all finite here) is within r, which
   * is kNN. Without this the per-axis range below would be wrong. */
  if (c->kind == 1 && c->r2 == INFINITY)
    c->kind = 0;
  c->G = 0;
  c->nna = 0;
  c->extmax = 0.0;
  for (int64_t a = 0; a < P; ++a) {
    double lo = rb_src(c, 0, a), hi = lo, ext;
    for (int64_t j = 1; j < N; ++j) {
      double x = rb_src(c, j, a);
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
    ext = hi - lo;
    if (!isfinite(ext))
      return 0;
    if (ext > 0.0) {
      c->ax[c->G] = (int)a;
      c->lo[c->G] = lo;
      c->ext[c->G] = ext;
      logv += log(ext);
      c->G++;
      if (ext > c->extmax)
        c->extmax = ext;
    } else {
      c->na_ax[c->nna] = (int)a;
      c->na_lo[c->nna] = lo;
      c->nna++;
    }
  }
  if (c->G == 0)
    return 0;

  /* The cell cap bounds memory; below it, h follows the density. */
  double hcap = rb_fit_cap(c, exp((logv - log(cap)) / c->G), cap);
  if (hcap <= 0.0)
    return 0;
  if (c->kind == 0) {
    double target = RB_KNN_FILL * (double)c->k;
    if (target < 2.0)
      target = 2.0;
    h = exp((logv + log(target) - log((double)N)) / c->G);
    h = rb_fit_cap(c, h < hcap ? hcap : h, cap);
    if (h <= 0.0)
      return 0;
  } else {
    h = c->r > hcap ? c->r : hcap;
    if (!isfinite(h))
      h = rb_fit_cap(c, c->extmax, cap); /* one cell per axis at most 2 */
    if (h <= 0.0)
      return 0;
  }

  m->cell = (int64_t *)malloc((size_t)N * sizeof(int64_t));
  m->cstart = (int64_t *)malloc(((size_t)cap + 1) * sizeof(int64_t));
  if (!m->cell || !m->cstart)
    return 0;

  /* Clustered data is much denser than the bounding box suggests: measure
   * the cell size seen by an average point and shrink h (kNN only; radius
   * keeps h >= r so that a query spans few cells per axis). */
  for (int it = 0;; ++it) {
    c->h = h;
    rb_set_n(c);
    ncells = c->n[0] * c->n[1] * c->n[2];
    memset(m->cstart, 0, ((size_t)ncells + 1) * sizeof(int64_t));
    for (int64_t j = 0; j < N; ++j) {
      m->cell[j] = rb_src_cell(c, j);
      m->cstart[m->cell[j] + 1]++;
    }
    if (c->kind != 0 || it == 3)
      break;
    double target = RB_KNN_FILL * (double)c->k, occ = 0.0, hn;
    if (target < 2.0)
      target = 2.0;
    for (int64_t x = 1; x <= ncells; ++x)
      occ += (double)m->cstart[x] * (double)m->cstart[x];
    occ /= (double)N;
    if (occ <= 2.0 * target)
      break;
    hn = rb_fit_cap(c, h * pow(target / occ, 1.0 / c->G), cap);
    if (!(hn > 0.0) || hn > 0.97 * h)
      break;
    h = hn;
  }

  m->sp = (double *)malloc((size_t)N * (size_t)D * sizeof(double));
  m->sidx = (int64_t *)malloc((size_t)N * sizeof(int64_t));
  if (!m->sp || !m->sidx)
    return 0;
  for (int64_t x = 0; x < ncells; ++x)
    m->cstart[x + 1] += m->cstart[x];
  /* Scatter with cstart[x] as the cursor of cell x - 1, so that it ends up
   * as the start of cell x. */
  for (int64_t j = 0; j < N; ++j) {
    int64_t p = m->cstart[m->cell[j]]++;
    m->sidx[p] = j;
    for (int64_t a = 0; a < D; ++a)
      m->sp[p * D + a] = rb_src(c, j, a);
  }
  memmove(m->cstart + 1, m->cstart, (size_t)ncells * sizeof(int64_t));
  m->cstart[0] = 0;

  c->sp = m->sp;
  c->sidx = m->sidx;
  c->cstart = m->cstart;
  c->order = NULL;
  if (c->self) {
    c->order = m->sidx;
  } else {
    /* Visit dst rows in cell order, so that neighbouring queries reuse the
     * cached src cells. Optional: on failure rows go in index order. */
    int64_t *cnt = (int64_t *)calloc((size_t)ncells + 1, sizeof(int64_t));
    int64_t *dc = (int64_t *)malloc((size_t)(M > 0 ? M : 1) * sizeof(int64_t));
    m->order = (int64_t *)malloc((size_t)(M > 0 ? M : 1) * sizeof(int64_t));
    if (cnt && dc && m->order) {
      for (int64_t i = 0; i < M; ++i) {
        dc[i] = rb_dst_cell(c, i);
        cnt[dc[i] + 1]++;
      }
      for (int64_t x = 0; x < ncells; ++x)
        cnt[x + 1] += cnt[x];
      for (int64_t i = 0; i < M; ++i)
        m->order[cnt[dc[i]]++] = i;
      c->order = m->order;
    }
    free(cnt);
    free(dc);
  }
  free(m->cell);
  m->cell = NULL;
  c->grid = 1;
  return 1;
}

static int rb_all_finite(const rb_ctx *c) {
  for (int64_t i = 0; i < c->M; ++i)
    for (int64_t a = 0; a < c->D; ++a)
      if (!isfinite(rb_dst(c, i, a)))
        return 0;
  if (c->self)
    return 1;
  for (int64_t j = 0; j < c->N; ++j)
    for (int64_t a = 0; a < c->D; ++a)
      if (!isfinite(rb_src(c, j, a)))
        return 0;
  return 1;
}

void _mlir_ciface_linnet_relation_build(linnet_memref2_f64 *pos_dst,
                                        linnet_memref2_f64 *pos_src,
                                        linnet_memref1_i64 *row_ptr,
                                        linnet_memref1_i64 *col_idx,
                                        int64_t kind, int64_t k,
                                        int64_t exclude_self, double r) {
  rb_ctx c;
  rb_grid_mem mem;
  int64_t total, pos = 0;
  memset(&c, 0, sizeof(c));
  memset(&mem, 0, sizeof(mem));
  c.dst = pos_dst->aligned;
  c.doff = pos_dst->offset;
  c.ds0 = pos_dst->strides[0];
  c.ds1 = pos_dst->strides[1];
  c.src = pos_src->aligned;
  c.soff = pos_src->offset;
  c.ss0 = pos_src->strides[0];
  c.ss1 = pos_src->strides[1];
  c.M = pos_dst->sizes[0];
  c.N = pos_src->sizes[0];
  c.D = pos_dst->sizes[1] < pos_src->sizes[1] ? pos_dst->sizes[1]
                                              : pos_src->sizes[1];
  c.k = k > 0 ? k : 0;
  c.kind = (int)kind;
  c.excl = exclude_self != 0;
  c.r = r;
  c.r2 = r * r;
  c.col = col_idx->aligned;
  c.coff = col_idx->offset;
  c.cs = col_idx->strides[0];
  c.rp = row_ptr->aligned;
  c.roff = row_ptr->offset;
  c.rs = row_ptr->strides[0];
  c.lmax = c.k < c.N ? c.k : c.N;
  c.self = pos_dst->aligned == pos_src->aligned &&
           pos_dst->offset == pos_src->offset &&
           pos_dst->sizes[0] == pos_src->sizes[0] &&
           pos_dst->sizes[1] == pos_src->sizes[1] &&
           pos_dst->strides[0] == pos_src->strides[0] &&
           pos_dst->strides[1] == pos_src->strides[1];
  if (c.M < 0 || c.N < 0)
    c.M = c.N = 0;

  /* Rows that cannot have any candidate skip the search entirely. */
  if (c.lmax <= 0 || (kind != 0 && kind != 1) || (kind == 1 && !(r >= 0.0))) {
    for (int64_t i = 0; i < c.M; ++i)
      c.rp[c.roff + (i + 1) * c.rs] = 0;
  } else {
    if (c.D > 0 && (double)c.M * (double)c.N > 65536.0 && rb_all_finite(&c) &&
        !rb_grid_build(&c, &mem)) {
      rb_grid_free(&mem);
      memset(&mem, 0, sizeof(mem));
      c.grid = 0;
      c.order = NULL;
    }
    rb_run_rows(&c);
    rb_grid_free(&mem);
  }

  /* Rows were written at i * k; pack them left (never overlapping forward)
   * and turn the counts into offsets. */
  c.rp[c.roff] = 0;
  for (int64_t i = 0; i < c.M; ++i) {
    int64_t cnt = c.rp[c.roff + (i + 1) * c.rs], from = i * c.k;
    if (from != pos)
      for (int64_t t = 0; t < cnt; ++t)
        c.col[c.coff + (pos + t) * c.cs] = c.col[c.coff + (from + t) * c.cs];
    pos += cnt;
    c.rp[c.roff + (i + 1) * c.rs] = pos;
  }
  total = c.M * c.k;
  if (col_idx->sizes[0] > total)
    total = col_idx->sizes[0];
  for (int64_t t = pos; t < total; ++t)
    c.col[c.coff + t * c.cs] = 0;
}
