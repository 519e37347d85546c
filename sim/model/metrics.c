/*
 * metrics — buckets, latency histograms, attempts and outcomes. See metrics.h.
 */
#include "metrics.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const metrics_outcome_names[OUT_NOUTCOMES] = {
    "ok", "business", "exhausted", "failed", "deadline", "throttled", "breaker"};

#define LAT_RATIO 1.005
#define LAT_TOP ((double)RS_TIME_LIMIT * 1.01)

/* The bin edges, shared by every latency histogram: [0,1) then 1·r^i. */
static size_t lat_nbins(void)
{
    return 1 + (size_t)ceil(log(LAT_TOP) / log(LAT_RATIO));
}

int metrics_lat_init(struct lat_hist *h)
{
    size_t n = lat_nbins();
    memset(h, 0, sizeof *h);
    h->h = gsl_histogram_calloc(n);
    if (h->h == NULL)
        return -1;
    double *range = h->h->range;
    range[0] = 0.0;
    range[1] = 1.0;
    for (size_t i = 2; i <= n; i++)
        range[i] = range[i - 1] * LAT_RATIO;
    metrics_lat_reset(h);
    return 0;
}

void metrics_lat_reset(struct lat_hist *h)
{
    if (h->n > 0)
        memset(h->h->bin + h->lo_bin, 0, (h->hi_bin - h->lo_bin + 1) * sizeof(double));
    h->n = 0;
    h->sum = 0.0;
    h->min = RS_TIME_NEVER;
    h->max = 0;
    h->lo_bin = SIZE_MAX;
    h->hi_bin = 0;
}

void metrics_lat_fini(struct lat_hist *h)
{
    if (h->h != NULL)
        gsl_histogram_free(h->h);
    h->h = NULL;
}

/* log2(x) for x >= 1 within 0.0013 (0.18 bins): the exponent plus a cubic
 * in the mantissa, least-squares fitted on [1, 2). Cheaper than log(); the
 * caller corrects against the edges, so only speed depends on accuracy. */
static inline double approx_log2(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    double e = (double)((int)(b >> 52) - 1023);
    b = (b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    double m;
    memcpy(&m, &b, sizeof m);
    double f = m - 1.0;
    return e + f * (1.4234951832369709 + f * (-0.5877732323896097 + f * 0.16559337082288136));
}

/* The bin of v: estimated in O(1), then corrected against the stored edges
 * so that it agrees exactly with them. */
static size_t lat_bin(const gsl_histogram *h, rs_time v)
{
    if (v < 1)
        return 0;
    const double inv_log2_ratio = 1.0 / log2(LAT_RATIO); /* folded by the compiler */
    double x = (double)v;
    size_t i = 1 + (size_t)(approx_log2(x) * inv_log2_ratio);
    if (i > h->n - 1)
        i = h->n - 1;
    while (i > 1 && x < h->range[i])
        i--;
    while (i + 1 < h->n && x >= h->range[i + 1])
        i++;
    return i;
}

static void lat_add_bin(struct lat_hist *h, size_t i, rs_time v)
{
    h->h->bin[i] += 1.0;
    if (i < h->lo_bin)
        h->lo_bin = i;
    if (i > h->hi_bin)
        h->hi_bin = i;
    h->n++;
    h->sum += (double)v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void metrics_lat_add(struct lat_hist *h, rs_time v) { lat_add_bin(h, lat_bin(h->h, v), v); }
void metrics_lat_add_in(struct lat_hist *h, size_t bin, rs_time v) { lat_add_bin(h, bin, v); }

double metrics_quantile(const struct lat_hist *h, double q)
{
    if (h->n == 0)
        return -1.0;
    double target = q * (double)h->n, cum = 0.0, x = (double)h->max;
    for (size_t i = h->lo_bin; i <= h->hi_bin; i++) {
        double c = h->h->bin[i];
        if (c > 0.0 && cum + c >= target) {
            double lo = h->h->range[i], hi = h->h->range[i + 1];
            x = lo + (hi - lo) * ((target - cum) / c);
            break;
        }
        cum += c;
    }
    /* The exact extremes are known: never report beyond them. */
    if (x < (double)h->min)
        x = (double)h->min;
    if (x > (double)h->max)
        x = (double)h->max;
    return x / 1e9;
}

/* An attempts histogram: bin i is [i, i + 1), edges exact
 * (set_ranges_uniform computes i / bins * bins, 7.0000000000000009 for
 * i = 7 of 25 bins). */
static gsl_histogram *att_hist(size_t bins)
{
    gsl_histogram *h = gsl_histogram_calloc(bins);
    if (h != NULL)
        for (size_t i = 0; i <= bins; i++)
            h->range[i] = (double)i;
    return h;
}

int metrics_extra_levels(struct metrics *m, size_t count, size_t at, const size_t *bins)
{
    if (m->nlayers + 1 + count > METRICS_MAX_LEVELS)
        return -1;
    for (size_t k = 0; k < count; k++) {
        size_t b = bins[k] < METRICS_ATT_BINS ? bins[k] : METRICS_ATT_BINS + 1;
        if ((m->att[m->nlayers + 1 + k] = att_hist(b)) == NULL)
            return -1;
    }
    m->nextra = count;
    m->extra_at = at;
    return 0;
}

int metrics_init(struct metrics *m, rs_time duration, rs_time bucket, size_t nlayers,
                 const unsigned *attempts_per_layer, char *err, size_t errsz)
{
    memset(m, 0, sizeof *m);
    m->bucket_ns = bucket;
    m->duration = duration;
    m->nbuckets = m->nalloc = (size_t)((duration + bucket - 1) / bucket);
    m->nlayers = nlayers;
    m->cur_end = bucket < duration ? bucket : duration;
    m->b = calloc(m->nbuckets, sizeof *m->b);
    m->attempts = calloc(m->nbuckets * nlayers, sizeof *m->attempts);
    m->lb = calloc(m->nbuckets * nlayers, sizeof *m->lb);
    if (m->b == NULL || m->attempts == NULL || m->lb == NULL)
        goto oom;
    for (size_t i = 0; i < m->nbuckets; i++)
        m->b[i].lat_p50 = m->b[i].lat_p99 = -1.0;
    if (metrics_lat_init(&m->bucket_lat) || metrics_lat_init(&m->lat_all))
        goto oom;
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        if (metrics_lat_init(&m->lat_by[o]))
            goto oom;
    double prod = 1.0;
    for (size_t l = 0; l <= nlayers; l++) {
        if (l < nlayers)
            prod *= attempts_per_layer[l];
        size_t bins = prod < METRICS_ATT_BINS ? (size_t)prod + 1 : METRICS_ATT_BINS + 1;
        if ((m->att[l] = att_hist(bins)) == NULL)
            goto oom;
    }
    return 0;
oom:
    snprintf(err, errsz, "out of memory allocating metrics for %zu buckets of %zu layers",
             m->nbuckets, nlayers);
    metrics_fini(m);
    return -1;
}

void metrics_fini(struct metrics *m)
{
    free(m->b);
    free(m->attempts);
    free(m->lb);
    metrics_lat_fini(&m->bucket_lat);
    metrics_lat_fini(&m->win_lat);
    free(m->win_p99);
    metrics_lat_fini(&m->lat_all);
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        metrics_lat_fini(&m->lat_by[o]);
    for (size_t l = 0; l < METRICS_MAX_LEVELS; l++)
        if (m->att[l] != NULL)
            gsl_histogram_free(m->att[l]);
    memset(m, 0, sizeof *m);
}

int metrics_windows(struct metrics *m, size_t buckets)
{
    m->win_buckets = buckets ? buckets : 1;
    m->nwin = m->nbuckets / m->win_buckets;
    if (m->duration % m->bucket_ns != 0 && m->nwin * m->win_buckets == m->nbuckets)
        m->nwin--; /* the last window holds the short last bucket: not whole */
    m->win_p99 = calloc(m->nwin ? m->nwin : 1, sizeof *m->win_p99);
    if (m->win_p99 == NULL || metrics_lat_init(&m->win_lat))
        return -1;
    for (size_t w = 0; w < m->nwin; w++)
        m->win_p99[w] = -1.0;
    return 0;
}

static void close_bucket(struct metrics *m)
{
    struct bucket *b = &m->b[m->cur];
    b->lat_p50 = metrics_quantile(&m->bucket_lat, 0.50);
    b->lat_p99 = metrics_quantile(&m->bucket_lat, 0.99);
    if (m->win_p99 != NULL) {
        if ((m->cur + 1) % m->win_buckets == 0) {
            size_t w = m->cur / m->win_buckets;
            if (w < m->nwin)
                m->win_p99[w] = metrics_quantile(&m->win_lat, 0.99);
            metrics_lat_reset(&m->win_lat);
        }
    }
    metrics_lat_reset(&m->bucket_lat);
}

void metrics_advance_slow(struct metrics *m, rs_time now, uint32_t queue, uint32_t busy,
                          uint64_t inflight)
{
    if (now > m->duration)
        now = m->duration;
    while (now > m->last_t) {
        rs_time end = (rs_time)(m->cur + 1) * m->bucket_ns;
        rs_time upto = now < end ? now : end;
        metrics_integrate(m, upto, queue, busy, inflight);
        if (upto == end && m->cur + 1 < m->nbuckets) {
            close_bucket(m);
            m->cur++;
            rs_time next_end = end + m->bucket_ns;
            m->cur_end = next_end < m->duration ? next_end : m->duration;
        } else if (upto == end) {
            break;
        }
    }
}

void metrics_truncate(struct metrics *m, rs_time end)
{
    size_t n = (size_t)((end + m->bucket_ns - 1) / m->bucket_ns);
    assert(n <= m->nalloc && n > m->cur && end >= m->last_t);
    m->duration = end;
    m->nbuckets = n;
    rs_time cur_end = (rs_time)(m->cur + 1) * m->bucket_ns;
    m->cur_end = cur_end < end ? cur_end : end;
}

/* Adds the counts of src into dst (histograms with the same edges). */
static void lat_merge(struct lat_hist *dst, const struct lat_hist *src)
{
    if (src->n == 0)
        return;
    for (size_t i = src->lo_bin; i <= src->hi_bin; i++)
        dst->h->bin[i] += src->h->bin[i];
    dst->lo_bin = src->lo_bin < dst->lo_bin ? src->lo_bin : dst->lo_bin;
    dst->hi_bin = src->hi_bin > dst->hi_bin ? src->hi_bin : dst->hi_bin;
    dst->n += src->n;
    dst->sum += src->sum;
    dst->min = src->min < dst->min ? src->min : dst->min;
    dst->max = src->max > dst->max ? src->max : dst->max;
}

void metrics_finish(struct metrics *m, rs_time end, uint32_t queue, uint32_t busy, uint64_t inflight)
{
    metrics_advance(m, end, queue, busy, inflight);
    close_bucket(m);
    /* every counted latency is in exactly one outcome's histogram: their
     * sum, once, instead of a fourth histogram filled at every request */
    metrics_lat_reset(&m->lat_all);
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        lat_merge(&m->lat_all, &m->lat_by[o]);
}

size_t metrics_outcome(struct metrics *m, enum outcome o, rs_time lat, bool counted)
{
    size_t bin = lat_bin(m->bucket_lat.h, lat); /* every latency histogram has the same edges */
    m->b[m->cur].outcomes[o]++;
    lat_add_bin(&m->bucket_lat, bin, lat);
    if (m->win_p99 != NULL && (m->last_t < m->win_since || m->last_t - lat >= m->win_since))
        lat_add_bin(&m->win_lat, bin, lat);
    if (counted) { /* lat_all is their sum, made by metrics_finish */
        m->outcomes[o]++;
        lat_add_bin(&m->lat_by[o], bin, lat);
    }
    return bin;
}

/* Level l of one request: v attempts (or hedges). */
static inline void att_add(struct metrics *m, size_t l, uint64_t v)
{
    gsl_histogram *h = m->att[l];
    /* the bin of v is v (the last one also holds more) */
    h->bin[v < h->n - 1 ? v : h->n - 1] += 1.0;
    m->att_sum[l] += (double)v;
    if (v > m->att_max[l])
        m->att_max[l] = v;
}

void metrics_request_attempts(struct metrics *m, const uint64_t *n)
{
    for (size_t l = 0; l <= m->nlayers; l++)
        att_add(m, l, n[l]);
    for (size_t k = 0; k < m->nextra; k++)
        att_add(m, m->nlayers + 1 + k, n[m->extra_at + k]);
    m->att_n++;
}

double metrics_bucket_len(const struct metrics *m, size_t i)
{
    rs_time start = (rs_time)i * m->bucket_ns;
    rs_time end = start + m->bucket_ns;
    if (end > m->duration)
        end = m->duration;
    return units_seconds(end - start);
}
