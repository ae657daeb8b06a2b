// ThreadSanitizer annotations for Debian's uninstrumented Abseil synchronisation, linked into every executable of
// the thread build (hack/sanitize.sh thread) only.
//
// absl::Mutex and absl::Notification live in libabsl_synchronization.so, compiled without -fsanitize=thread, and
// block with raw futex calls that TSan does not intercept. Without help TSan sees no ordering between two threads
// that take the same absl::Mutex and reports every guarded member as a race. The linker's --wrap (see
// tsan_abseil_sync.cmake) sends this project's calls to the wrappers below, which tell TSan what the real call
// does, the way an instrumented Abseil would: lock, unlock, wait (a release and a re-acquire) and notify. Memory
// accesses inside the real call are ignored, as TSan does for its own mutexes: the Condition functions Abseil
// evaluates there run with the mutex held but out of TSan's sight of the lock. Only calls made by this project's
// code are wrapped; Abseil's calls from inside gRPC or Abseil itself never touch this project's memory.
//
// LIKEN_ABSL_NS is the mangled `absl::<inline namespace>` prefix (e.g. 4absl7debian3), computed by CMake from
// absl/base/options.h, so the symbols match the installed Abseil.

#include <sanitizer/tsan_interface.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#ifndef LIKEN_ABSL_NS
#error "LIKEN_ABSL_NS must name the mangled Abseil namespace (set by tsan_abseil_sync.cmake)"
#endif

#define LIKEN_PASTE(a, b, c) a##b##c
#define LIKEN_EXPAND(a, b, c) LIKEN_PASTE(a, b, c)
// The wrapper and the real function of a member of absl::<ns>, by its mangled name after the namespace.
#define WRAP(member) LIKEN_EXPAND(__wrap__ZN, LIKEN_ABSL_NS, member)
#define REAL(member) LIKEN_EXPAND(__real__ZN, LIKEN_ABSL_NS, member)
#define WRAP_CONST(member) LIKEN_EXPAND(__wrap__ZNK, LIKEN_ABSL_NS, member)
#define REAL_CONST(member) LIKEN_EXPAND(__real__ZNK, LIKEN_ABSL_NS, member)

namespace {

// Calls `wait` on a held mutex that the call releases and takes again before it returns.
template <typename Wait>
auto AnnotateRelock(absl::Mutex* mu, unsigned flags, Wait wait) {
  __tsan_mutex_pre_unlock(mu, flags);
  auto result = wait();
  __tsan_mutex_post_unlock(mu, flags);
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
  return result;
}

// Calls `lock`, which returns with the mutex held.
template <typename Lock>
auto AnnotateLock(absl::Mutex* mu, unsigned flags, Lock lock) {
  __tsan_mutex_pre_lock(mu, flags);
  auto result = lock();
  __tsan_mutex_post_lock(mu, flags, 0);
  return result;
}

}  // namespace

extern "C" {

// Mutex::Lock, Unlock, TryLock and their reader forms.
void REAL(5Mutex4LockEv)(absl::Mutex* mu);
void WRAP(5Mutex4LockEv)(absl::Mutex* mu) {
  AnnotateLock(mu, 0, [&] { REAL(5Mutex4LockEv)(mu); return 0; });
}
void REAL(5Mutex10ReaderLockEv)(absl::Mutex* mu);
void WRAP(5Mutex10ReaderLockEv)(absl::Mutex* mu) {
  AnnotateLock(mu, __tsan_mutex_read_lock, [&] { REAL(5Mutex10ReaderLockEv)(mu); return 0; });
}
void REAL(5Mutex6UnlockEv)(absl::Mutex* mu);
void WRAP(5Mutex6UnlockEv)(absl::Mutex* mu) {
  __tsan_mutex_pre_unlock(mu, 0);
  REAL(5Mutex6UnlockEv)(mu);
  __tsan_mutex_post_unlock(mu, 0);
}
void REAL(5Mutex12ReaderUnlockEv)(absl::Mutex* mu);
void WRAP(5Mutex12ReaderUnlockEv)(absl::Mutex* mu) {
  __tsan_mutex_pre_unlock(mu, __tsan_mutex_read_lock);
  REAL(5Mutex12ReaderUnlockEv)(mu);
  __tsan_mutex_post_unlock(mu, __tsan_mutex_read_lock);
}
bool REAL(5Mutex7TryLockEv)(absl::Mutex* mu);
bool WRAP(5Mutex7TryLockEv)(absl::Mutex* mu) {
  __tsan_mutex_pre_lock(mu, __tsan_mutex_try_lock);
  bool locked = REAL(5Mutex7TryLockEv)(mu);
  __tsan_mutex_post_lock(mu, __tsan_mutex_try_lock | (locked ? 0 : __tsan_mutex_try_lock_failed), 0);
  return locked;
}
bool REAL(5Mutex13ReaderTryLockEv)(absl::Mutex* mu);
bool WRAP(5Mutex13ReaderTryLockEv)(absl::Mutex* mu) {
  __tsan_mutex_pre_lock(mu, __tsan_mutex_try_read_lock);
  bool locked = REAL(5Mutex13ReaderTryLockEv)(mu);
  __tsan_mutex_post_lock(mu, locked ? __tsan_mutex_try_read_lock : __tsan_mutex_try_read_lock_failed, 0);
  return locked;
}

// Mutex::LockWhen*: return with the mutex held, whatever the condition.
void REAL(5Mutex8LockWhenERKNS0_9ConditionE)(absl::Mutex* mu, const absl::Condition& cond);
void WRAP(5Mutex8LockWhenERKNS0_9ConditionE)(absl::Mutex* mu, const absl::Condition& cond) {
  AnnotateLock(mu, 0, [&] { REAL(5Mutex8LockWhenERKNS0_9ConditionE)(mu, cond); return 0; });
}
bool REAL(5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                        absl::Duration timeout);
bool WRAP(5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                        absl::Duration timeout) {
  return AnnotateLock(
      mu, 0, [&] { return REAL(5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)(mu, cond, timeout); });
}
bool REAL(5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                      absl::Time deadline);
bool WRAP(5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                      absl::Time deadline) {
  return AnnotateLock(
      mu, 0, [&] { return REAL(5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)(mu, cond, deadline); });
}

// Mutex::Await*: called with the mutex held; release it while waiting and take it again.
void REAL(5Mutex5AwaitERKNS0_9ConditionE)(absl::Mutex* mu, const absl::Condition& cond);
void WRAP(5Mutex5AwaitERKNS0_9ConditionE)(absl::Mutex* mu, const absl::Condition& cond) {
  AnnotateRelock(mu, 0, [&] { REAL(5Mutex5AwaitERKNS0_9ConditionE)(mu, cond); return 0; });
}
bool REAL(5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                     absl::Duration timeout);
bool WRAP(5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                     absl::Duration timeout) {
  return AnnotateRelock(
      mu, 0, [&] { return REAL(5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)(mu, cond, timeout); });
}
bool REAL(5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                  absl::Time deadline);
bool WRAP(5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)(absl::Mutex* mu, const absl::Condition& cond,
                                                                  absl::Time deadline) {
  return AnnotateRelock(
      mu, 0, [&] { return REAL(5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)(mu, cond, deadline); });
}

// CondVar::Wait*: the same release and re-acquire of the mutex passed in.
void REAL(7CondVar4WaitEPNS0_5MutexE)(absl::CondVar* cv, absl::Mutex* mu);
void WRAP(7CondVar4WaitEPNS0_5MutexE)(absl::CondVar* cv, absl::Mutex* mu) {
  AnnotateRelock(mu, 0, [&] { REAL(7CondVar4WaitEPNS0_5MutexE)(cv, mu); return 0; });
}
bool REAL(7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE)(absl::CondVar* cv, absl::Mutex* mu,
                                                                 absl::Duration timeout);
bool WRAP(7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE)(absl::CondVar* cv, absl::Mutex* mu,
                                                                 absl::Duration timeout) {
  return AnnotateRelock(
      mu, 0, [&] { return REAL(7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE)(cv, mu, timeout); });
}
bool REAL(7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE)(absl::CondVar* cv, absl::Mutex* mu, absl::Time deadline);
bool WRAP(7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE)(absl::CondVar* cv, absl::Mutex* mu, absl::Time deadline) {
  return AnnotateRelock(
      mu, 0, [&] { return REAL(7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE)(cv, mu, deadline); });
}

// Mutex::~Mutex: forget the mutex, so a later object at the same address starts afresh.
void REAL(5MutexD1Ev)(absl::Mutex* mu);
void WRAP(5MutexD1Ev)(absl::Mutex* mu) {
  __tsan_mutex_destroy(mu, 0);
  REAL(5MutexD1Ev)(mu);
}
void REAL(5MutexD2Ev)(absl::Mutex* mu);
void WRAP(5MutexD2Ev)(absl::Mutex* mu) {
  __tsan_mutex_destroy(mu, 0);
  REAL(5MutexD2Ev)(mu);
}

// Notification: what happens before Notify() happens before a wait that saw it. (HasBeenNotified() is inline
// and reads an atomic the uninstrumented Notify() wrote; a `true` from it orders nothing for TSan.)
void REAL(12Notification6NotifyEv)(absl::Notification* n);
void WRAP(12Notification6NotifyEv)(absl::Notification* n) {
  __tsan_release(n);
  REAL(12Notification6NotifyEv)(n);
}
void REAL_CONST(12Notification19WaitForNotificationEv)(const absl::Notification* n);
void WRAP_CONST(12Notification19WaitForNotificationEv)(const absl::Notification* n) {
  REAL_CONST(12Notification19WaitForNotificationEv)(n);
  __tsan_acquire(const_cast<absl::Notification*>(n));
}
bool REAL_CONST(12Notification30WaitForNotificationWithTimeoutENS0_8DurationE)(const absl::Notification* n,
                                                                               absl::Duration timeout);
bool WRAP_CONST(12Notification30WaitForNotificationWithTimeoutENS0_8DurationE)(const absl::Notification* n,
                                                                               absl::Duration timeout) {
  bool notified = REAL_CONST(12Notification30WaitForNotificationWithTimeoutENS0_8DurationE)(n, timeout);
  if (notified) __tsan_acquire(const_cast<absl::Notification*>(n));
  return notified;
}
bool REAL_CONST(12Notification31WaitForNotificationWithDeadlineENS0_4TimeE)(const absl::Notification* n,
                                                                            absl::Time deadline);
bool WRAP_CONST(12Notification31WaitForNotificationWithDeadlineENS0_4TimeE)(const absl::Notification* n,
                                                                            absl::Time deadline) {
  bool notified = REAL_CONST(12Notification31WaitForNotificationWithDeadlineENS0_4TimeE)(n, deadline);
  if (notified) __tsan_acquire(const_cast<absl::Notification*>(n));
  return notified;
}

}  // extern "C"
