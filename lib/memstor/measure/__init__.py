"""Side effects only: sweeps, atomic files and locks, safe targets, sysinfo, the fio and MLC/loadlat runners."""
