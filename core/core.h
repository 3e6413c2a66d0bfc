// core/core.h — everything in tapegrad's core layer, in one include.
#pragma once

#include "core/atomic_file.h"
#include "core/autograd.h"
#include "core/broadcast.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/factories.h"
#include "core/generator.h"
#include "core/gradcheck.h"
#include "core/half.h"
#include "core/parallel.h"
#include "core/random.h"
#include "core/safetensors.h"
#include "core/shape.h"
#include "core/storage.h"
#include "core/tape_print.h"
#include "core/tensor.h"
