import { readFileSync } from 'node:fs';

/**
 * CPU seconds a process has used so far, user plus system, from `/proc/<pid>/stat` (Linux only): benchmarks read it
 * before and after a step to say what the step cost each process of the control plane.
 */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which is in parentheses and may itself hold spaces or parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
