// Nothing to compile: the target only makes LLVMFuzzerRunDriver's declaration visible to Swift.
#include "CLibFuzzer.h"
