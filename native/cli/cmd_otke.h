// native/cli/cmd_otke.h - `inductive otke {fit,embed,eval}`: unsupervised OTKE + logistic head on sequences or
// vector sets (input conventions in otke_inputs.h).
#pragma once

#include <CLI/CLI.hpp>

namespace inductive::cli {

void add_otke_command(CLI::App& app);         // the `otke` group (cmd_otke.cpp)
void add_otke_fit_command(CLI::App& otke);    // `otke fit` (cmd_otke_fit.cpp)
void add_otke_train_command(CLI::App& otke);  // `otke train` (cmd_otke_train.cpp)

}  // namespace inductive::cli
