# Runs PROGRAM under MPIEXEC with NP ranks (cmake -P; tests/profiler/CMakeLists.txt):
#   OUT            WAITLAB_PROFILER_OUT, emptied first ("" = none)
#   PRELOAD        library to preload in the ranks only ("" = none)
#   TEST           WAITLAB_PROFILER_TEST
#   LOG            file for the program's standard output
#   EXPECT_STDERR  text the standard error must contain ("" = none)
# Fails unless mpirun exits with 0.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)  # CI containers run as root
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_mpi_yield_when_idle} 1)  # waiting ranks yield the oversubscribed cores
set(ENV{WAITLAB_PROFILER_TEST} "${TEST}")
# Sanitized builds (WAITLAB_SANITIZE): Open MPI does not free all it allocates.
if(DEFINED ENV{ASAN_OPTIONS})
  set(ENV{ASAN_OPTIONS} "$ENV{ASAN_OPTIONS}:detect_leaks=0")
else()
  set(ENV{ASAN_OPTIONS} detect_leaks=0)
endif()
set(args --oversubscribe -np ${NP} -x WAITLAB_PROFILER_TEST -x ASAN_OPTIONS)
if(OUT)
  file(REMOVE_RECURSE "${OUT}")
  set(ENV{WAITLAB_PROFILER_OUT} "${OUT}")
  list(APPEND args -x WAITLAB_PROFILER_OUT)
endif()
if(PRELOAD)
  list(APPEND args -x LD_PRELOAD=${PRELOAD})  # not for mpirun itself
endif()
execute_process(COMMAND ${MPIEXEC} ${args} ${PROGRAM}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(WRITE "${LOG}" "${out}")
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MPIEXEC} ${args} ${PROGRAM} exited with ${rc}")
endif()
if(EXPECT_STDERR)
  string(FIND "${err}" "${EXPECT_STDERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "standard error does not contain \"${EXPECT_STDERR}\"")
  endif()
endif()
