/* The minimal loop `bench/characterize-vs-loop.py` compares `rtscope
 * characterize` with: pinned to one CPU, SCHED_FIFO, memory locked, it
 * times N calls in one block (two clock reads for the whole block, so
 * the harness costs nothing per call) and prints ns per call as JSON.
 * Build: cc -O2 -o characterize-loop characterize-loop.c -lpthread */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static pthread_mutex_t make(int protocol) {
    pthread_mutexattr_t a;
    pthread_mutex_t m;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setprotocol(&a, protocol);
    pthread_mutex_init(&m, &a);
    pthread_mutexattr_destroy(&a);
    return m;
}

/* ns per lock+unlock pair, per trylock+unlock pair. */
static void mutex_pairs(int protocol, long n, double *lock_unlock, double *try_unlock) {
    pthread_mutex_t m = make(protocol);
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    double t1 = now_ns();
    for (long i = 0; i < n; i++) {
        if (pthread_mutex_trylock(&m) == 0)
            pthread_mutex_unlock(&m);
    }
    double t2 = now_ns();
    *lock_unlock = (t1 - t0) / n;
    *try_unlock = (t2 - t1) / n;
}

int main(int argc, char **argv) {
    int cpu = argc > 1 ? atoi(argv[1]) : 0;
    long n = argc > 2 ? atol(argv[2]) : 20000000;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    struct sched_param p = {.sched_priority = 99};
    if (sched_setaffinity(0, sizeof set, &set) || sched_setscheduler(0, SCHED_FIFO, &p) ||
        mlockall(MCL_CURRENT | MCL_FUTURE)) {
        perror("set-up (run as root)");
        return 2;
    }
    struct timespec ts;
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    double clock_ns = (now_ns() - t0) / n;
    double plain_lu, plain_tu, pi_lu, pi_tu;
    mutex_pairs(PTHREAD_PRIO_NONE, n, &plain_lu, &plain_tu);
    mutex_pairs(PTHREAD_PRIO_INHERIT, n, &pi_lu, &pi_tu);
    printf("{\"clock_gettime_ns\": %.2f, \"plain_lock_unlock_ns\": %.2f, \"plain_trylock_unlock_ns\": %.2f, "
           "\"pi_lock_unlock_ns\": %.2f, \"pi_trylock_unlock_ns\": %.2f}\n",
           clock_ns, plain_lu, plain_tu, pi_lu, pi_tu);
    return 0;
}
