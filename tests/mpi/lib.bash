# MPI tests: as the e2e helpers, plus mpirun settings for a root CI machine with 2 cores.
source "$(dirname "$0")/../e2e/lib.bash"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no warnings about missing high-speed networks.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
MPIRUN=(mpirun --oversubscribe --bind-to none)
