/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * checks.c: the run checks itself (as Lancet does); a failed check makes "open_loop": false.
 *   rate          achieved (completions in the window / runtime) within +-5 % of the offered rate
 *   For the arrivals' intended times AND their submission times (the sample of record.c):
 *   The Poisson tests hold the run's chance of failing a correct generator at ARRIVAL_ALPHA (1 %): each of the
 *   run's m tests (3 per direction and source) at alpha = 1 % / m (Bonferroni). At 1 % each, a run of reads
 *   and writes failed about 11 % of correct runs by chance (12 tests).
 *   exp_gaps      poisson: Kolmogorov-Smirnov D of the gaps against the exponential of the asked rate,
 *                 D <= c(alpha) / (sqrt(n) + 0.12 + 0.11/sqrt(n)), c(alpha) = sqrt(-ln(alpha/2)/2) (c = 1.628 at
 *                 1 %; fully specified F; Stephens 1974); submitted gaps may each move by
 *                 min(--ks-tolerance-us, 5 % of the mean gap), or the run's mean submit-call cost when
 *                 larger, at most one mean gap (submitted_tolerance_ns)
 *   no_trend      poisson: least-squares slope of the arrivals per bin (20 bins, or 1 s bins from 20 s up)
 *                 over the bin index, |t| <= t(1 - alpha/2, bins - 2); constant: drift over the run <= 2 %
 *   independence  poisson: lag-1 autocorrelation of the gaps within +-z(1 - alpha/2) / sqrt(n)
 *   The submissions move from their intended times by their lag. When the p99 lag (or --move-us) exceeds the
 *   gaps' tolerance,
 *   the gaps no longer show the process (one late submission makes a long gap and a short one: lag-1 -0.07
 *   against a bound of +-0.045 at 68,711 IOPS with a 60 us p99 lag on a VM), so the submitted arrivals are tested by their counts in
 *   windows WINDOW_LAGS p99 lags wide (and >= 5 expected arrivals; a Poisson process whose points each move
 *   independently is still Poisson, and at that width the lag moves few across a window's edge):
 *   dispersion    variance / mean of the counts, (n-1) x it within chi2(n-1) at alpha/2 and 1-alpha/2
 *                 (Wilson-Hilferty): bunched arrivals are over-dispersed, too regular ones under-dispersed
 *   independence  lag-1 autocorrelation of the counts within +-z(1 - alpha/2) / sqrt(n)
 *   constant_cv   constant: coefficient of variation of the gaps <= 0.1
 *   lag           p99 lag <= max(--lag-fraction x p99 response, --lag-floor-us): else "generator-bound"; when its
 *                 submit calls blocked (calls >= SUBMIT_BLOCKED_NS: a full request queue, or the CPU taken) for
 *                 >= SUBMIT_BLOCKED_PCT of the run, the sentence says so: enough arrivals waited behind them
 *                 to make the late 1 %
 *   Run-level: not overloaded (the cap on outstanding I/Os), nothing unfinished after the drain, no I/O
 *   errors, not interrupted.
 */
#include "ioarrive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct check *add(struct checks *out, const char *name, int dir, const char *source, int passed, double value,
                         double low, double high)
{
    if (out->n >= MAX_CHECKS) die("internal: too many checks");
    struct check *c = &out->c[out->n++];
    memset(c, 0, sizeof *c);
    c->name = name; c->dir = dir; c->source = source; c->passed = passed;
    c->value = value; c->low = low; c->high = high;
    return c;
}

/* The normal quantile at p (0 < p < 1): Acklam's rational approximation (relative error < 1.2e-9). */
double normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    if (!(p > 0 && p < 1)) return NAN;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425) return -normal_quantile(1 - p);
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* Student's t quantile for the normal quantile z (same p) and df degrees of freedom: Cornish-Fisher (within
 * 0.1 % from df 10 on at the p used here; the trend test has at least 18). */
double t_quantile(double z, int df)
{
    if (df < 3) return NAN;
    double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, v = df;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v)
           + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

/* Kolmogorov's asymptotic critical value c(alpha) of sqrt(n) D, used with Stephens' (sqrt(n) + 0.12 +
 * 0.11/sqrt(n)) for a fully specified F: c(0.01) = 1.628. */
double ks_critical(double alpha)
{
    return sqrt(-0.5 * log(alpha / 2));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double exp_cdf(double x, double rate_per_ns) { return x > 0 ? 1.0 - exp(-rate_per_ns * x) : 0.0; }

/* Kolmogorov-Smirnov D against the exponential; with tol_ns > 0 each gap may move by up to tol_ns (the
 * submission's own resolution): D is then never larger, so the 1 % critical value stays conservative. */
double ks_exponential(double *x, int n, double rate_per_ns, double tol_ns)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double d = 0;
    for (int i = 0; i < n; i++) {
        double f_hi = exp_cdf(x[i] + tol_ns, rate_per_ns), f_lo = exp_cdf(x[i] - tol_ns, rate_per_ns);
        double a = (double)(i + 1) / n - f_hi, b = f_lo - (double)i / n;
        if (a > d) d = a;
        if (b > d) d = b;
    }
    return d;
}

struct gaps { double *g; int n; double *a, *b; int npairs; };

static void gaps_of(const struct dir_rec *dr, int submitted, struct gaps *out)
{
    out->g = malloc(sizeof(double) * (size_t)dr->nsamp + 1);
    out->a = malloc(sizeof(double) * (size_t)dr->nsamp + 1);
    out->b = malloc(sizeof(double) * (size_t)dr->nsamp + 1);
    if (!out->g || !out->a || !out->b) die("out of memory");
    out->n = out->npairs = 0;
    for (int k = 0; k < dr->nsamp; k++) {
        const struct sample *s = &dr->samp[k];
        const int64_t *t = submitted ? s->ts : s->ti;
        if ((s->have & 3) != 3) continue;
        out->g[out->n++] = (double)(t[1] - t[0]);
        if (s->have == 7) {
            out->a[out->npairs] = (double)(t[1] - t[0]);
            out->b[out->npairs++] = (double)(t[2] - t[1]);
        }
    }
}

static double mean_cv(const double *g, int n, double *cv)
{
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++) s += g[i];
    double m = s / n;
    for (int i = 0; i < n; i++) ss += (g[i] - m) * (g[i] - m);
    *cv = n > 1 && m > 0 ? sqrt(ss / (n - 1)) / m : NAN;
    return m;
}

static double lag1(const struct gaps *gp)
{
    double m = 0, num = 0, den = 0;
    for (int i = 0; i < gp->npairs; i++) m += gp->a[i] + gp->b[i];
    m /= 2.0 * gp->npairs;
    for (int i = 0; i < gp->npairs; i++) {
        num += (gp->a[i] - m) * (gp->b[i] - m);
        den += 0.5 * ((gp->a[i] - m) * (gp->a[i] - m) + (gp->b[i] - m) * (gp->b[i] - m));
    }
    return den > 0 ? num / den : NAN;
}

/* Least squares of the counts per bin over the bin index: the slope and its t statistic. */
static double trend(const uint64_t *y, int n, double *slope, double *mean)
{
    double xm = (n - 1) / 2.0, ym = 0, sxx = 0, sxy = 0, sse = 0;
    for (int i = 0; i < n; i++) ym += (double)y[i];
    ym /= n;
    for (int i = 0; i < n; i++) {
        sxx += (i - xm) * (i - xm);
        sxy += (i - xm) * ((double)y[i] - ym);
    }
    *slope = sxy / sxx;
    *mean = ym;
    for (int i = 0; i < n; i++) {
        double r = (double)y[i] - ym - *slope * (i - xm);
        sse += r * r;
    }
    double se = sqrt(sse / (n - 2) / sxx);
    if (se == 0) return *slope == 0 ? 0 : INFINITY;
    return *slope / se;
}

static enum proc_kind tested_as(const struct job *j, int d)
{
    switch (j->check_as) {
    case CHECK_POISSON: return PROC_POISSON;
    case CHECK_CONSTANT: return PROC_CONSTANT;
    case CHECK_NONE: return PROC_NONE;
    default: return j->dir[d].proc == PROC_TRACE ? PROC_NONE : j->dir[d].proc;
    }
}

/* How far a submitted gap may move (ns): min(--ks-tolerance-us, 5 % of the mean gap), or this run's mean cost
 * of one submit call when larger — the generator cannot place a submission more finely than one system call
 * (10-50 us on a VM) — but never more than one mean gap. */
static double submitted_tolerance_ns(const struct job *j, const struct run_facts *f, double rate_ns)
{
    double tol = fmin(j->ks_tol_us * 1e3, 0.05 / rate_ns);
    if (f->submit_calls)
        tol = fmax(tol, fmin(f->submit_call_ns / (double)f->submit_calls, 1.0 / rate_ns));
    return tol;
}

/* The chi-square quantile of k degrees of freedom at the normal quantile z (Wilson-Hilferty; within 0.5 % from
 * k = 20 at the levels used here). */
static double chi2_quantile(double z, double k)
{
    double a = 2.0 / (9.0 * k), b = 1.0 - a + z * sqrt(a);
    return k * b * b * b;
}

/* The submitted arrivals of a Poisson direction as counts in windows WINDOW_LAGS x `move` (ns: how far each may
 * have moved, the p99 lag or --move-us) wide, and wide enough for 5 expected arrivals. */
static void count_checks(const struct job *j, const struct dir_rec *dr, int d, double move, double alpha,
                         struct checks *out)
{
    double rate_ns = j->dir[d].rate_iops / 1e9, want = fmax(WINDOW_LAGS * move, 5.0 / rate_ns);
    int k = (int)ceil(want / (double)dr->fine_ns), n = dr->nfine / k;
    double w_us = (double)k * (double)dr->fine_ns / 1e3;
    struct check *c;
    if (n < 20) {
        c = add(out, "arrivals", d, "submitted", 0, n, 20, NAN);
        snprintf(c->detail, sizeof c->detail, "%s submitted arrivals: %d windows of %.4g us (%d x %.4g us, by "
                 "which they may move), too few to test (20 needed)", DIR_NAMES[d], n, w_us, WINDOW_LAGS, move / 1e3);
        return;
    }
    double *y = malloc(sizeof(double) * (size_t)n), m = 0, v = 0, num = 0;
    if (!y) die("out of memory");
    for (int i = 0; i < n; i++) {
        uint64_t sum = 0;
        for (int f = i * k; f < (i + 1) * k; f++) sum += dr->fine_submitted[f];
        y[i] = (double)sum;
        m += y[i];
    }
    m /= n;
    for (int i = 0; i < n; i++) v += (y[i] - m) * (y[i] - m);
    for (int i = 0; i + 1 < n; i++) num += (y[i] - m) * (y[i + 1] - m);
    double r1 = v > 0 ? num / v : NAN, disp = m > 0 ? v / (n - 1) / m : NAN, z = normal_quantile(1 - alpha / 2);
    double lo = chi2_quantile(-z, n - 1) / (n - 1), hi = chi2_quantile(z, n - 1) / (n - 1);
    c = add(out, "dispersion", d, "submitted", disp >= lo && disp <= hi, disp, lo, hi);
    snprintf(c->detail, sizeof c->detail, "%s submitted arrivals in %d windows of %.4g us (%d x %.4g us, by which "
             "they may move): variance / mean %.3f, bounds %.3f-%.3f at %.2g %% (mean %.4g per window)",
             DIR_NAMES[d], n, w_us, WINDOW_LAGS, move / 1e3, disp, lo, hi, 100 * alpha, m);
    double bound = z / sqrt((double)n);
    c = add(out, "independence", d, "submitted", fabs(r1) <= bound, r1, -bound, bound);
    snprintf(c->detail, sizeof c->detail, "%s submitted arrivals per %.4g us window: lag-1 autocorrelation %.4f, "
             "bound +-%.4f at %.2g %% (%d windows)", DIR_NAMES[d], w_us, r1, bound, 100 * alpha, n);
    free(y);
}

static void arrival_checks(const struct job *j, const struct run_facts *f, const struct dir_rec *dr, int d,
                           int submitted, double alpha, struct checks *out)
{
    enum proc_kind as = tested_as(j, d);
    const char *src = submitted ? "submitted" : "intended";
    if (as == PROC_NONE) return;
    struct gaps gp;
    gaps_of(dr, submitted, &gp);
    if (gp.n < 20) {
        struct check *c = add(out, "arrivals", d, src, 0, gp.n, 20, NAN);
        snprintf(c->detail, sizeof c->detail, "%s %s arrivals: %d gaps sampled, too few to test (20 needed)",
                 DIR_NAMES[d], src, gp.n);
        goto done;
    }
    double rate_ns = j->dir[d].rate_iops / 1e9, cv, m = mean_cv(gp.g, gp.n, &cv), slope, ymean;
    double t = trend(submitted ? dr->bins_submitted : dr->bins_intended, dr->nbins, &slope, &ymean);
    double tol = submitted ? submitted_tolerance_ns(j, f, rate_ns) : 0;
    double move = j->move_us >= 0 ? j->move_us * 1e3 : hist_pct(&dr->lag, 99);
    int by_counts = submitted && as == PROC_POISSON && move > tol;
    struct check *c;
    if (as == PROC_POISSON) {
        double z = normal_quantile(1 - alpha / 2), tc = t_quantile(z, dr->nbins - 2);
        if (by_counts) {
            count_checks(j, dr, d, move, alpha, out);
        } else {
            double sn = sqrt((double)gp.n), dks = ks_exponential(gp.g, gp.n, rate_ns, tol);
            double crit = ks_critical(alpha) / (sn + 0.12 + 0.11 / sn);
            c = add(out, "exp_gaps", d, src, dks <= crit, dks, NAN, crit);
            snprintf(c->detail, sizeof c->detail, "%s %s gaps vs exponential(%.6g IOPS): KS D = %.4f (gaps +-%.3g "
                     "us), critical value at %.2g %% %.4f (n = %d; mean gap %.4g us, CV %.3f)", DIR_NAMES[d], src,
                     j->dir[d].rate_iops, dks, tol / 1e3, 100 * alpha, crit, gp.n, m / 1e3, cv);
            double r1 = lag1(&gp), bound = z / sqrt((double)gp.npairs);
            c = add(out, "independence", d, src, gp.npairs >= 20 && fabs(r1) <= bound, r1, -bound, bound);
            snprintf(c->detail, sizeof c->detail, "%s %s gaps: lag-1 autocorrelation %.4f, bound +-%.4f at %.2g %% "
                     "(%d pairs)", DIR_NAMES[d], src, r1, bound, 100 * alpha, gp.npairs);
        }
        c = add(out, "no_trend", d, src, fabs(t) <= tc, t, -tc, tc);
        snprintf(c->detail, sizeof c->detail, "%s %s arrivals per bin: slope %.4g per bin (mean %.4g, %d bins), "
                 "t = %.3f, bound +-%.3f at %.2g %%", DIR_NAMES[d], src, slope, ymean, dr->nbins, t, tc, 100 * alpha);
    } else {
        c = add(out, "constant_cv", d, src, cv <= CONSTANT_CV_MAX, cv, NAN, CONSTANT_CV_MAX);
        snprintf(c->detail, sizeof c->detail, "%s %s gaps: CV %.4f (bound %.2f; mean gap %.4g us, n = %d)",
                 DIR_NAMES[d], src, cv, CONSTANT_CV_MAX, m / 1e3, gp.n);
        double drift = ymean > 0 ? 100.0 * slope * dr->nbins / ymean : NAN;
        c = add(out, "no_trend", d, src, fabs(drift) <= 2.0, drift, -2.0, 2.0);
        snprintf(c->detail, sizeof c->detail, "%s %s arrivals per bin drift %.3f %% over the run (bound +-2 %%)",
                 DIR_NAMES[d], src, drift);
    }
done:
    free(gp.g); free(gp.a); free(gp.b);
}

static void direction_checks(const struct job *j, const struct recorder *r, const struct run_facts *f, int d,
                             double alpha, struct checks *out)
{
    const struct dir_rec *dr = &r->d[d];
    double secs = f->measured_s > 0 ? f->measured_s : j->runtime_s;
    double pct = 100.0 * (double)dr->window_done / secs / j->dir[d].rate_iops;
    struct check *c = add(out, "rate", d, NULL, fabs(pct - 100.0) <= RATE_TOL_PCT, pct, 100 - RATE_TOL_PCT,
                          100 + RATE_TOL_PCT);
    snprintf(c->detail, sizeof c->detail, "%s: achieved %.1f %% of the offered %.6g IOPS (bounds %.0f-%.0f %%)",
             DIR_NAMES[d], pct, j->dir[d].rate_iops, 100 - RATE_TOL_PCT, 100 + RATE_TOL_PCT);
    arrival_checks(j, f, dr, d, 0, alpha, out);
    arrival_checks(j, f, dr, d, 1, alpha, out);
    double lag99 = hist_pct(&dr->lag, 99), resp99 = hist_pct(&dr->resp, 99);
    double bound = fmax(j->lag_fraction * (isnan(resp99) ? 0 : resp99), j->lag_floor_us * 1e3);
    out->lag_bound_ns[d] = bound;
    int ok = !(lag99 > bound) && dr->lag.n > 0;
    c = add(out, "lag", d, NULL, ok, lag99, NAN, bound);
    double blocked_pct = 100.0 * f->blocked_ns / 1e9 / secs;
    int said = blocked_pct >= SUBMIT_BLOCKED_PCT;  /* enough to have made the late 1 % wait: say so */
    char why[128];
    snprintf(why, sizeof why, said ? ": generator-bound; its submit calls >= %lld us took %.2g %% of the run "
             "(blocked: the request queue full, or the CPU taken)" : ": generator-bound", SUBMIT_BLOCKED_NS / 1000,
             blocked_pct);
    snprintf(c->detail, sizeof c->detail, "%s: p99 lag %.4g us %s the bound %.4g us (max of %.3g x p99 response "
             "%.4g us and %.4g us)%s", DIR_NAMES[d], lag99 / 1e3, ok ? "within" : "over", bound / 1e3,
             j->lag_fraction, resp99 / 1e3, j->lag_floor_us, ok ? "" : why);
    if (!ok && dr->lag.n > 0) out->generator_bound = 1;
    if (dr->errors) {
        c = add(out, "io_errors", d, NULL, 0, (double)dr->errors, NAN, 0);
        snprintf(c->detail, sizeof c->detail, "%s: %llu I/Os failed (first: %s)", DIR_NAMES[d],
                 (unsigned long long)dr->errors, dr->first_errno ? strerror(dr->first_errno) : "short transfer");
    }
}

void run_checks(const struct job *j, const struct recorder *r, const struct run_facts *f, struct checks *out)
{
    memset(out, 0, sizeof *out);
    int tests = 0;  /* the Poisson tests of the run: 3 (KS, trend, independence) x 2 (intended, submitted) */
    for (int d = 0; d < NDIR; d++)
        if (j->dir[d].active && tested_as(j, d) == PROC_POISSON)
            tests += 6;
    out->alpha = tests ? ARRIVAL_ALPHA / tests : ARRIVAL_ALPHA;
    for (int d = 0; d < NDIR; d++)
        if (j->dir[d].active)
            direction_checks(j, r, f, d, out->alpha, out);
    struct check *c = add(out, "not_overloaded", -1, NULL, !f->overloaded, f->overloaded, NAN, NAN);
    if (f->overloaded)
        snprintf(c->detail, sizeof c->detail, "overloaded: %u I/Os outstanding (the cap) at %.3f s; issuing stopped",
                 j->max_outstanding, f->overload_at_s);
    else
        snprintf(c->detail, sizeof c->detail, "outstanding I/Os stayed below the cap of %u", j->max_outstanding);
    c = add(out, "drained", -1, NULL, f->unfinished == 0, (double)f->unfinished, NAN, 0);
    snprintf(c->detail, sizeof c->detail, "%llu I/Os unfinished %.3g s after the last arrival",
             (unsigned long long)f->unfinished, j->drain_s);
    if (f->interrupted) {
        c = add(out, "not_interrupted", -1, NULL, 0, 1, NAN, NAN);
        snprintf(c->detail, sizeof c->detail, "interrupted by a signal before the end of the run");
    }
    out->open_loop = 1;
    for (int i = 0; i < out->n; i++)
        out->open_loop &= out->c[i].passed;
}
