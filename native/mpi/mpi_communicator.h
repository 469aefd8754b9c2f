// native/mpi/mpi_communicator.h - the "mpi" Communicator (inductive/communicator.h) over MPI_COMM_WORLD.
//
// make_communicator("mpi" | "auto" under mpirun) reaches it once register_mpi_communicator() has run (the CLI does
// so at start-up). MPI is initialised on first use and finalised at exit. A rank that fails must not leave the
// others waiting in a collective: the CLI calls abort_if_distributed() on its error path, which ends every rank.
#pragma once

#include <memory>

#include "inductive/communicator.h"

namespace inductive::mpi {

std::unique_ptr<Communicator> make_mpi_communicator();

// Registers the factory with inductive::make_communicator. Idempotent.
void register_mpi_communicator();

// When MPI runs with more than one rank: MPI_Abort(MPI_COMM_WORLD, code), so that no rank hangs in a collective
// waiting for this one. Otherwise nothing.
void abort_if_distributed(int code);

}  // namespace inductive::mpi
