// inductive/screening.h - safe sample screening for regularised ERM (thesis ch. 4; METHODS.md §3), one include.
//
// Usage:
//   Dataset d = read_csv("digits.csv.gz");                       // datasets.h
//   ErmProblem prob{d.x.get(), one_vs_rest(d.y, 9), Loss::squared_hinge(), Penalty::l2(), 1.0};
//   SolverOptions opt; opt.tol = 1e-6; opt.dynamic_screening = true;
//   SolveResult fit = solve_erm(prob, opt);                        // solver.h: gap-certified, screens as it goes
//   ScreenResult s = screen_samples(prob, warm_x, {});             // screen.h: static, from certified regions
//   VerifyReport v = verify_screening(prob, s.screened);           // verify.h: refit and compare
#pragma once

#include "inductive/screening/compression.h"
#include "inductive/screening/datasets.h"
#include "inductive/screening/design_matrix.h"
#include "inductive/screening/ellipsoid.h"
#include "inductive/screening/kernel.h"
#include "inductive/screening/loss.h"
#include "inductive/screening/path.h"
#include "inductive/screening/penalty.h"
#include "inductive/screening/problem.h"
#include "inductive/screening/screen.h"
#include "inductive/screening/screen_report.h"
#include "inductive/screening/screening_rules.h"
#include "inductive/screening/solve_and_screen.h"
#include "inductive/screening/solver.h"
#include "inductive/screening/verify.h"
