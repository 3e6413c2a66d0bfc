// nn/nn.h — every nn module, optimizer and data helper, in one include.
#pragma once

#include "nn/accounting.h"
#include "nn/activation.h"
#include "nn/checkpoint.h"
#include "nn/embedding.h"
#include "nn/grad_utils.h"
#include "nn/idx.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/loader.h"
#include "nn/lr_schedule.h"
#include "nn/module.h"
#include "nn/norm.h"
#include "nn/optim.h"
#include "nn/sequential.h"
#include "nn/text_data.h"
#include "nn/transformer.h"
