package cluster

// PidsBelow lists the processes in a cgroup directory and below it; it
// serves cgroups no lab state names, such as a killed control-plane
// study's (cpstudy/leftover), with the lab's own walk.
func PidsBelow(dir string) []int { return pidsBelow(dir) }

// RemoveCgroupTree removes a cgroup directory and those below it, deepest
// first, waiting a little for exiting processes, as lab down does its own.
func RemoveCgroupTree(dir string) error { return removeTree(dir) }
