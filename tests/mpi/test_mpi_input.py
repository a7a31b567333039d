"""Bad input for MPI runs gets a clear error naming the cause (no MPI needed)."""

from __future__ import annotations

import pytest

from ethlab.cli import main
from ethlab.experiment.spec import SpecError, parse_spec
from vfabric.mpi import in_mpi_job


def test_ranks_zero_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["run", "experiments/demo-virtual.yaml", "--ranks", "0"])
    assert err.value.code == 2
    assert "--ranks: must be in 1..4096 (got 0)" in capsys.readouterr().err


def test_ranks_need_the_virtual_clock(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "experiments/demo.yaml", "--ranks", "2", "--clock", "emulated"]) == 2
    assert "--ranks needs the virtual clock" in capsys.readouterr().err


def test_unknown_backend_is_refused() -> None:
    raw = {"name": "x", "topology": {"name": "erack", "params": {"gpus": 4, "planes": 2, "radix": 8}},
           "clock": "virtual", "virtual": {"backend": "threads"},
           "traffic": {"pattern": "all_to_all", "size": "16KiB"}, "policies": [{"name": "ecmp"}]}
    with pytest.raises(SpecError, match=r"virtual.backend: must be one of fork, mpi \(got 'threads'\)"):
        parse_spec(raw)


def test_no_launcher_means_no_mpi(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"):
        monkeypatch.delenv(key, raising=False)
    assert not in_mpi_job()
    monkeypatch.setenv("PMI_SIZE", "1")
    assert not in_mpi_job()  # one rank: nothing to share
    monkeypatch.setenv("PMI_SIZE", "3")
    assert in_mpi_job()


def test_doctor_reports_the_mpi_it_finds() -> None:
    from ethlab.doctor import mpi_check

    check = mpi_check()
    assert check.name == "MPI (mpi4py)" and not check.required
    if check.ok:  # make setup installs mpi4py and the mpich wheel: its version and launcher are named
        assert "mpi4py 4." in check.detail and "mpiexec" in check.detail
    else:
        assert check.fix
