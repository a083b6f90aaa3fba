// Clang's thread-safety annotations, checked by -Wthread-safety in clang builds (the
// ThreadSanitizer build of scripts/sanitize.sh compiles with it and warnings as errors); other
// compilers see nothing. Use them with tf::Mutex (base/mutex.h):
//
//   Mutex mu_;
//   int64_t served_ GUARDED_BY(mu_) = 0;        // read or written only with mu_ held
//   void Flush() REQUIRES(mu_);                 // callers hold mu_
//   void Stop() EXCLUDES(mu_);                  // callers must not hold mu_ (it takes it)
//
// https://clang.llvm.org/docs/ThreadSafetyAnalysis.html
#pragma once

#if defined(__clang__)
#define TF_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TF_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (Mutex), or a scoped holder of one (MutexLock).
#define CAPABILITY(name) TF_THREAD_ANNOTATION(capability(name))
#define SCOPED_CAPABILITY TF_THREAD_ANNOTATION(scoped_lockable)

// A field read or written only with the given mutex held; PT_: the data a pointer points to.
#define GUARDED_BY(x) TF_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) TF_THREAD_ANNOTATION(pt_guarded_by(x))

// A function called with the mutexes held / not held.
#define REQUIRES(...) TF_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) TF_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// A function that takes / gives back a mutex (or, on a scoped holder, the one it holds).
#define ACQUIRE(...) TF_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) TF_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) TF_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) TF_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) TF_THREAD_ANNOTATION(lock_returned(x))

// For the rare function whose locking the analysis cannot follow; say why beside it.
#define NO_THREAD_SAFETY_ANALYSIS TF_THREAD_ANNOTATION(no_thread_safety_analysis)
