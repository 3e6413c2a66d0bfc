# tests/examples/sample_cache.cmake — tiny_lm sample with and without its KV cache must write
# the same text while the context has not filled (examples/tiny_lm.cpp: from then on the
# cache restarts from half the context and the two differ by design).
#
#   cmake -DTINY_LM=path -DCHECKPOINT=file -DLENGTH=n -P sample_cache.cmake
#
# Run with TAPEGRAD_KERNELS=reference: on the reference kernels the cached logits are the
# recomputed ones bit for bit (tests/nn/kv_cache_test.cpp), so every draw is the same.
cmake_minimum_required(VERSION 3.25)

foreach(mode IN ITEMS cache no_cache)
  set(flag "")
  if(mode STREQUAL "no_cache")
    set(flag --no-cache)
  endif()
  execute_process(COMMAND ${TINY_LM} sample --checkpoint ${CHECKPOINT} --length ${LENGTH}
                          --temperature 1.0 --top-k 10 --top-p 0.9 --seed 4 ${flag}
                  RESULT_VARIABLE code OUTPUT_VARIABLE text_${mode} ERROR_VARIABLE err)
  message("${mode}: ${text_${mode}}${err}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "tiny_lm sample ${flag} exited with ${code}")
  endif()
  if(NOT err MATCHES "tokens/s, KV cache")
    message(FATAL_ERROR "tiny_lm sample ${flag} did not report its speed on stderr: ${err}")
  endif()
endforeach()
string(LENGTH "${text_cache}" n)
if(n LESS LENGTH)
  message(FATAL_ERROR "expected at least ${LENGTH} characters, got ${n}")
endif()
if(NOT text_cache STREQUAL text_no_cache)
  message(FATAL_ERROR "the KV cache changed the text:\n${text_cache}\nvs\n${text_no_cache}")
endif()
