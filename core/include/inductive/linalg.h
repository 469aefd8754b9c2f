// inductive/linalg.h - the dense matrix types the layers use (Eigen, row-major float like the model file).
#pragma once

#include <Eigen/Core>

namespace inductive {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VecF = Eigen::VectorXf;
using MapF = Eigen::Map<MatF>;
using CMapF = Eigen::Map<const MatF>;
using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace inductive
