// train_dpo.h: ./train's DPO mode (./train --dpo PAIRS.bin ...), in tools/train_dpo.c.
#ifndef TRAIN_DPO_H
#define TRAIN_DPO_H

// 1 if argv asks for the DPO mode (a --dpo flag).
int train_dpo_wanted(int argc, char **argv);
// Parses argv (the DPO mode's flags only), trains and returns the exit code (0, 1 bad data, 2 bad usage).
int train_dpo_main(int argc, char **argv);

#endif
