# tests/examples/refusal_cases.cmake — bad command lines and bad files given to the example
# programs, each a CTest case "refuses.<program>.<what>" run by refuses.cmake: non-zero
# status, no signal, one line on stderr matching the regex. Included from tests/CMakeLists.txt
# after the smoke tests, whose outputs (a tiny_lm and a fashion_mnist checkpoint) some cases
# use. The table of errors in docs/errors.md lists these cases with what they print.

set(refuse_dir ${smoke}/refuse)
set(refuse_script ${CMAKE_CURRENT_SOURCE_DIR}/examples/refuses.cmake)
set(a_file ${PROJECT_SOURCE_DIR}/CMakeLists.txt)  # a file where a directory is expected
file(WRITE ${smoke}/empty.txt "")
file(WRITE ${smoke}/short.txt "ab\n")
string(REPEAT "xyz\nzyx\n" 200 other_words)
file(WRITE ${smoke}/other_words.txt "${other_words}")

# tapegrad_refuses(<name> PROGRAM <target> [ARGS ...] EXPECT <regex> [UNCHANGED <file>]
#                  [REQUIRE_PATH <path>] [FIXTURE <fixture>])
function(tapegrad_refuses name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PROGRAM;EXPECT;UNCHANGED;REQUIRE_PATH;FIXTURE"
                        "ARGS")
  set(run "$<TARGET_FILE:${arg_PROGRAM}>")
  foreach(a IN LISTS arg_ARGS)
    string(APPEND run "|${a}")
  endforeach()
  set(defs "-DRUN=${run}" "-DEXPECT=${arg_EXPECT}" "-DNAME=${arg_PROGRAM}.${name}"
           "-DWORK_DIR=${refuse_dir}")
  foreach(opt IN ITEMS UNCHANGED REQUIRE_PATH)
    if(arg_${opt})
      list(APPEND defs "-D${opt}=${arg_${opt}}")
    endif()
  endforeach()
  set(test refuses.${arg_PROGRAM}.${name})
  add_test(NAME ${test} COMMAND ${CMAKE_COMMAND} ${defs} -P ${refuse_script})
  set_tests_properties(${test} PROPERTIES LABELS examples TIMEOUT 120 SKIP_RETURN_CODE 77)
  if(arg_FIXTURE)
    set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED ${arg_FIXTURE})
  endif()
endfunction()

# ---- moons
tapegrad_refuses(steps_zero PROGRAM moons ARGS --steps 0 EXPECT "^moons: --steps: value 0 is not a whole number >= 1")
tapegrad_refuses(steps_negative PROGRAM moons ARGS --steps -5 EXPECT "--steps: value -5")
tapegrad_refuses(steps_not_a_number PROGRAM moons ARGS --steps many EXPECT "--steps: value many")
tapegrad_refuses(seed_negative PROGRAM moons ARGS --seed -1 EXPECT "--seed: value -1 is not a whole number >= 0")
tapegrad_refuses(samples_one PROGRAM moons ARGS --samples 1 EXPECT "--samples: value 1 is not a whole number from 2")
tapegrad_refuses(hidden_zero PROGRAM moons ARGS --hidden 16 0 EXPECT "--hidden: value 0")
tapegrad_refuses(hidden_huge PROGRAM moons ARGS --hidden 65536 65536 EXPECT "--hidden 65536 65536 makes 4.3e.09 weights. the limit is 2.26")
tapegrad_refuses(lr_nan PROGRAM moons ARGS --lr nan EXPECT "--lr: value nan is not a finite number > 0")
tapegrad_refuses(noise_negative PROGRAM moons ARGS --noise -0.1 EXPECT "--noise: value -0.1 is not a finite number >= 0")
tapegrad_refuses(out_is_a_file PROGRAM moons ARGS --out ${a_file} EXPECT "--out '.*CMakeLists.txt' exists and is not a directory")
tapegrad_refuses(out_cannot_be_made PROGRAM moons ARGS --out /proc/tapegrad/out EXPECT "--out '/proc/tapegrad/out': cannot create the directory")

# ---- fashion_mnist
tapegrad_refuses(batch_zero PROGRAM fashion_mnist ARGS --batch 0 EXPECT "--batch: value 0")
tapegrad_refuses(epochs_negative PROGRAM fashion_mnist ARGS --epochs -1 EXPECT "--epochs: value -1")
tapegrad_refuses(lr_zero PROGRAM fashion_mnist ARGS --lr 0 EXPECT "--lr: value 0 is not a finite number > 0")
tapegrad_refuses(train_limit_negative PROGRAM fashion_mnist ARGS --train-limit -3 EXPECT "--train-limit: value -3")
tapegrad_refuses(data_dir_missing PROGRAM fashion_mnist ARGS --data-dir ${refuse_dir}/no_such_dir --out ${refuse_dir}/fashion
  EXPECT "no_such_dir/train-images-idx3-ubyte.gz.*no such file")
tapegrad_refuses(out_is_a_file PROGRAM fashion_mnist ARGS --out ${a_file} EXPECT "--out '.*' exists and is not a directory")
tapegrad_refuses(resume_without_checkpoint PROGRAM fashion_mnist ARGS --resume --out ${refuse_dir}/fashion_empty
  REQUIRE_PATH /usr/share/datasets/fashion-mnist EXPECT "--resume: there is no checkpoint '.*fashion_empty/checkpoint.safetensors'")
tapegrad_refuses(resume_with_another_batch PROGRAM fashion_mnist
  ARGS --train-limit 2000 --epochs 2 --batch 64 --resume --out ${smoke}/fashion
  FIXTURE fashion_checkpoint REQUIRE_PATH ${smoke}/fashion/checkpoint.safetensors
  UNCHANGED ${smoke}/fashion/checkpoint.safetensors
  EXPECT "trained on 2000 images in batches of 128 .16 per epoch., this run has 2000 images in batches of 64 .32 per epoch.")

# ---- tiny_lm train (lm: the smoke run's small model, so that only the bad part is bad)
set(ckpt ${smoke}/tiny_lm/checkpoint.safetensors)
# lm_args without --data, and with a wider model (a flag may be given once).
set(lm_shape --steps 20 --layers 1 --heads 2 --d-ff 32 --context 8 --batch 4 --warmup 5
             --eval-every 10 --eval-tokens 256 --json)
tapegrad_refuses(steps_negative PROGRAM tiny_lm ARGS train --steps -5 EXPECT "^tiny_lm: --steps: value -5 is not a whole number >= 1")
tapegrad_refuses(steps_zero PROGRAM tiny_lm ARGS train --steps 0 EXPECT "--steps: value 0")
tapegrad_refuses(seed_negative PROGRAM tiny_lm ARGS train --seed -1 EXPECT "--seed: value -1")
tapegrad_refuses(seed_too_large PROGRAM tiny_lm ARGS train --seed 99999999999999999999 EXPECT "--seed: value 99999999999999999999 is too large")
tapegrad_refuses(eval_every_zero PROGRAM tiny_lm ARGS train --eval-every 0 EXPECT "--eval-every: value 0")
tapegrad_refuses(eval_every_negative PROGRAM tiny_lm ARGS train --eval-every -1 EXPECT "--eval-every: value -1")
tapegrad_refuses(eval_tokens_negative PROGRAM tiny_lm ARGS train --eval-tokens -1 EXPECT "--eval-tokens: value -1")
tapegrad_refuses(eval_tokens_within_context PROGRAM tiny_lm ARGS train --eval-tokens 32 --context 32
  EXPECT "--eval-tokens 32 must be more than --context 32")
tapegrad_refuses(lr_infinite PROGRAM tiny_lm ARGS train --lr inf EXPECT "--lr: value inf is not a finite number")
tapegrad_refuses(min_lr_above_lr PROGRAM tiny_lm ARGS train --lr 0.001 --min-lr 0.01 EXPECT "--min-lr 0.01 is more than --lr 0.001")
tapegrad_refuses(layers_1e8 PROGRAM tiny_lm ARGS train --layers 100000000 EXPECT "--layers: value 100000000 is not a whole number from 1 to 16777216")
tapegrad_refuses(model_too_large PROGRAM tiny_lm ARGS train --d-model 16384 --layers 100 --d-ff 16384
  EXPECT "TransformerConfig: vocab_size [0-9]+, d_model 16384, n_layers 100 and d_ff 16384 make a model of .* parameters")
tapegrad_refuses(heads_do_not_divide PROGRAM tiny_lm ARGS train --data ${smoke}/words.txt --heads 3
  EXPECT "TransformerConfig: d_model 64 is not divisible by n_heads 3")
tapegrad_refuses(kv_heads_do_not_divide PROGRAM tiny_lm ARGS train --data ${smoke}/words.txt --kv-heads 3
  EXPECT "TransformerConfig: n_kv_heads 3 must divide n_heads 4")
tapegrad_refuses(attention_too_large PROGRAM tiny_lm ARGS train --context 65536 --eval-tokens 100000
  EXPECT "--batch 32 x --heads 4 x --context 65536.2 x --layers 3 = .* attention probabilities")
tapegrad_refuses(data_missing PROGRAM tiny_lm ARGS train --data ${refuse_dir}/no_such.txt EXPECT "--data '.*no_such.txt' does not exist")
tapegrad_refuses(data_empty PROGRAM tiny_lm ARGS train --data ${smoke}/empty.txt EXPECT "--data '.*empty.txt' is empty")
tapegrad_refuses(data_is_a_directory PROGRAM tiny_lm ARGS train --data ${smoke} EXPECT "--data '.*' is a directory, not a file")
tapegrad_refuses(data_too_short PROGRAM tiny_lm ARGS train --data ${smoke}/short.txt
  EXPECT "--data '.*short.txt' has 3 tokens: too few for --context 32")
tapegrad_refuses(out_is_a_file PROGRAM tiny_lm ARGS train --data ${smoke}/words.txt --out ${a_file}
  EXPECT "--out '.*' exists and is not a directory")
tapegrad_refuses(resume_without_checkpoint PROGRAM tiny_lm ARGS train ${lm_args} --resume --out ${refuse_dir}/lm_empty
  EXPECT "--resume: there is no checkpoint")
tapegrad_refuses(resume_with_other_data PROGRAM tiny_lm ARGS train --data ${smoke}/other_words.txt --d-model 16 ${lm_shape} --resume --out ${smoke}/tiny_lm
  FIXTURE tiny_lm_checkpoint UNCHANGED ${ckpt} EXPECT "--resume: '.*' was trained on other data or another tokenizer than --data '.*other_words.txt' --tokenizer char")
tapegrad_refuses(resume_with_another_tokenizer PROGRAM tiny_lm ARGS train ${lm_args} --tokenizer bpe --resume --out ${smoke}/tiny_lm
  FIXTURE tiny_lm_checkpoint UNCHANGED ${ckpt} EXPECT "--resume: '.*' was trained on other data or another tokenizer than --data '.*words.txt' --tokenizer bpe")
tapegrad_refuses(tokenizer_unknown PROGRAM tiny_lm ARGS train --tokenizer words EXPECT "--tokenizer: words not in")
tapegrad_refuses(vocab_size_too_small PROGRAM tiny_lm ARGS train --tokenizer bpe --vocab-size 256 EXPECT "--vocab-size: value 256 is not a whole number from 257")
tapegrad_refuses(vocab_size_with_char PROGRAM tiny_lm ARGS train --vocab-size 500 EXPECT "--vocab-size applies to --tokenizer bpe, not --tokenizer char")
tapegrad_refuses(min_count_with_bpe PROGRAM tiny_lm ARGS train --tokenizer bpe --min-count 2 EXPECT "--min-count applies to --tokenizer char, not --tokenizer bpe")
tapegrad_refuses(titles_without_tang PROGRAM tiny_lm ARGS train --titles EXPECT "--titles applies to --data tang, not --data 'words'")
tapegrad_refuses(resume_with_another_model PROGRAM tiny_lm ARGS train --data ${smoke}/words.txt --d-model 32 ${lm_shape} --resume --out ${smoke}/tiny_lm
  FIXTURE tiny_lm_checkpoint UNCHANGED ${ckpt} EXPECT "--resume: '.*' holds the model .*d_model.:16.*but the flags describe .*d_model.:32")
tapegrad_refuses(resume_in_another_dtype PROGRAM tiny_lm ARGS train ${lm_args} --dtype bf16 --resume --out ${smoke}/tiny_lm
  FIXTURE tiny_lm_checkpoint UNCHANGED ${ckpt} EXPECT "--resume: '.*' was trained with --dtype f32, but this run has --dtype bf16")
tapegrad_refuses(dtype_unknown PROGRAM tiny_lm ARGS train --dtype fp8 EXPECT "--dtype: fp8 not in")
tapegrad_refuses(init_scale_zero PROGRAM tiny_lm ARGS train --init-scale 0 EXPECT "--init-scale: value 0 is not a finite number > 0")

# ---- spoiled checkpoints (tests/examples/bad_checkpoints.cpp), for resume and sample
set(bad ${smoke}/bad_checkpoints)
add_test(NAME refuses.make_bad_checkpoints COMMAND bad_checkpoints ${ckpt} ${bad})
set_tests_properties(refuses.make_bad_checkpoints PROPERTIES LABELS examples
                     FIXTURES_REQUIRED tiny_lm_checkpoint FIXTURES_SETUP bad_checkpoints)
foreach(case IN ITEMS
    "no_config|has no 'config' metadata"
    "no_tokenizer|has no 'tokenizer' metadata"
    "no_step|has no 'tapegrad.step' entry"
    "step_not_a_number|has tapegrad.step = 'twelve', not an integer"
    "lr_not_a_number|tapegrad.optimizer.lr = 'fast'"
    "missing_tensor|load_checkpoint: .*"
    "wrong_shape|load_checkpoint: .*shape"
    "truncated|safetensors: .*"
    "truncated_header|safetensors: .*")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 variant)
  list(GET case 1 expect)
  tapegrad_refuses(resume_${variant} PROGRAM tiny_lm ARGS train ${lm_args} --resume --out ${bad}/${variant}
    FIXTURE bad_checkpoints UNCHANGED ${bad}/${variant}/checkpoint.safetensors EXPECT "${expect}")
endforeach()

# ---- tiny_lm sample
tapegrad_refuses(checkpoint_missing PROGRAM tiny_lm ARGS sample --checkpoint ${refuse_dir}/none.safetensors
  EXPECT "^tiny_lm sample: --checkpoint '.*none.safetensors' is not a file")
tapegrad_refuses(checkpoint_not_safetensors PROGRAM tiny_lm ARGS sample --checkpoint ${a_file} EXPECT "safetensors: .*CMakeLists.txt")
tapegrad_refuses(top_k_negative PROGRAM tiny_lm ARGS sample --top-k -1 EXPECT "--top-k: value -1")
tapegrad_refuses(temperature_negative PROGRAM tiny_lm ARGS sample --temperature -1 EXPECT "--temperature: value -1 is not a finite number >= 0")
tapegrad_refuses(length_negative PROGRAM tiny_lm ARGS sample --length -1 EXPECT "--length: value -1")
tapegrad_refuses(top_p_zero PROGRAM tiny_lm ARGS sample --top-p 0 EXPECT "--top-p: value 0 is not a finite number > 0")
tapegrad_refuses(top_p_above_one PROGRAM tiny_lm ARGS sample --top-p 1.5 EXPECT "^tiny_lm sample: --top-p must be in .0, 1., got 1.5")
foreach(case IN ITEMS
    "no_config|is not a tiny_lm checkpoint .it has no 'config' and 'tokenizer' metadata."
    "config_not_json|TransformerConfig::from_json: .*parse error"
    "config_layers_1e8|TransformerConfig: n_layers 100000000 is more than 2.24"
    "config_too_many_parameters|d_model 4096, n_layers 1000 .* parameters .* the limit is 2.28"
    "config_layer_count_is_text|TransformerConfig::from_json: .*type must be number"
    "vocab_mismatch|has a tokenizer of [0-9]+ ids but a model for [0-9]+"
    "truncated_header|safetensors: ")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 variant)
  list(GET case 1 expect)
  tapegrad_refuses(sample_${variant} PROGRAM tiny_lm ARGS sample --checkpoint ${bad}/${variant}/checkpoint.safetensors
    FIXTURE bad_checkpoints EXPECT "${expect}")
endforeach()
