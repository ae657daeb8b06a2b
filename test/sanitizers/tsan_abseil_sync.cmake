# The thread build's view of Abseil's uninstrumented synchronisation (see tsan_abseil_sync.cc): an object library
# linked into every executable, and the linker told to send this project's calls to its wrappers.
find_path(LIKEN_ABSL_INCLUDE_DIR absl/base/options.h REQUIRED)
file(STRINGS ${LIKEN_ABSL_INCLUDE_DIR}/absl/base/options.h absl_namespace_line
     REGEX "^#define ABSL_OPTION_INLINE_NAMESPACE_NAME ")
string(REGEX REPLACE ".* ([A-Za-z0-9_]+)$" "\\1" absl_namespace "${absl_namespace_line}")
if(absl_namespace STREQUAL "")
  message(FATAL_ERROR "no ABSL_OPTION_INLINE_NAMESPACE_NAME in ${LIKEN_ABSL_INCLUDE_DIR}/absl/base/options.h")
endif()
string(LENGTH "${absl_namespace}" absl_namespace_length)
set(absl_mangled "4absl${absl_namespace_length}${absl_namespace}")

# Mangled names after `_ZN<ns>` (or `_ZNK<ns>` for const members), as in tsan_abseil_sync.cc.
set(wrapped_members
  5Mutex4LockEv 5Mutex10ReaderLockEv 5Mutex6UnlockEv 5Mutex12ReaderUnlockEv 5Mutex7TryLockEv
  5Mutex13ReaderTryLockEv 5Mutex8LockWhenERKNS0_9ConditionE
  5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE 5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE
  5Mutex5AwaitERKNS0_9ConditionE 5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE
  5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE 7CondVar4WaitEPNS0_5MutexE
  7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE 7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE
  5MutexD1Ev 5MutexD2Ev 12Notification6NotifyEv)
set(wrapped_const_members
  12Notification19WaitForNotificationEv 12Notification30WaitForNotificationWithTimeoutENS0_8DurationE
  12Notification31WaitForNotificationWithDeadlineENS0_4TimeE)

add_library(liken_tsan_abseil_sync OBJECT ${CMAKE_CURRENT_LIST_DIR}/tsan_abseil_sync.cc)
target_compile_definitions(liken_tsan_abseil_sync PRIVATE LIKEN_ABSL_NS=${absl_mangled})
target_link_libraries(liken_tsan_abseil_sync PUBLIC absl::synchronization absl::time)
set(wrap_options)
foreach(member ${wrapped_members})
  list(APPEND wrap_options "LINKER:--wrap=_ZN${absl_mangled}${member}")
endforeach()
foreach(member ${wrapped_const_members})
  list(APPEND wrap_options "LINKER:--wrap=_ZNK${absl_mangled}${member}")
endforeach()
add_link_options(${wrap_options})
link_libraries("$<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:liken_tsan_abseil_sync>")
