// What the benches read from /proc (Linux): a process's memory and CPU time, PostgreSQL's CPU, and during a
// scenario of bench/run.ts the CPU of the whole machine, so that other people's work on a shared machine can be
// told apart from the bench's own.
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { performance } from 'node:perf_hooks'

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100

/** A file of /proc; empty once its process has ended. */
function proc(path: string): string {
  try {
    return readFileSync(`/proc/${path}`, 'utf8')
  } catch {
    return ''
  }
}

/** Peak (VmHWM) and current (VmRSS) resident memory of a process, in MB; 0 once it has ended. */
export function memoryMb(pid: number): { peak: number; now: number } {
  const status = proc(`${pid}/status`)
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
  return { peak: mb('VmHWM'), now: mb('VmRSS') }
}

/** The CPU time (user and system) a process has used so far, in ms; 0 once it has ended. */
export function cpuMs(pid: number): number {
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
  const stat = proc(`${pid}/stat`)
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 1000) / CLOCK_TICKS
}

/** CPU time the whole machine spent busy (all CPUs, /proc/stat), in milliseconds. */
function machineBusyMs(): number {
  const fields = proc('stat').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? []
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS
}

/** CPU time of each PostgreSQL process (ours, and those of anyone else using the same server). */
function postgresCpuMs(): Map<number, number> {
  const cpu = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (/^[0-9]+$/.test(entry) && proc(`${pid}/comm`).trim() === 'postgres') cpu.set(pid, cpuMs(pid))
  }
  return cpu
}

/** CPU the PostgreSQL processes used since `before` (a backend that ended meanwhile is not counted). */
function postgresCpuSince(before: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of postgresCpuMs()) total += ms - (before.get(pid) ?? 0)
  return total
}

/** The load average over 1, 5 and 15 minutes, as printed in the report. */
export const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

export interface Usage {
  rssPeakMb: number
  /** CPU of the server under test. */
  cpuMs: number
  /** CPU of all PostgreSQL processes (the bench's backends, plus anyone else's on a shared server). */
  postgresMs: number
  /**
   * CPUs (in cores, on average) used by everything else than the server under test, wrk (sampled every 200 ms, so
   * slightly under), PostgreSQL and this harness: other people's work on a shared machine. Near 0 on a quiet one.
   */
  otherCores: number
}

/** Samples the server's RSS every 200 ms (peak) and the CPU use of it and of the rest of the machine. */
export function sampleScenario(pid: number): { wrkStarted: (pid: number) => void; stop: () => Usage } {
  let peak = memoryMb(pid).now
  const started = performance.now()
  const [cpuStart, busyStart, pgStart, harnessStart] = [
    cpuMs(pid),
    machineBusyMs(),
    postgresCpuMs(),
    process.cpuUsage(),
  ]
  let wrkPid = 0
  let wrkCpu = 0
  const timer = setInterval(() => {
    peak = Math.max(peak, memoryMb(pid).now)
    if (wrkPid) wrkCpu = Math.max(wrkCpu, cpuMs(wrkPid))
  }, 200)
  return {
    wrkStarted: (p) => {
      wrkPid = p
    },
    stop: () => {
      clearInterval(timer)
      const server = cpuMs(pid) - cpuStart
      const harness = process.cpuUsage(harnessStart)
      const postgres = postgresCpuSince(pgStart)
      const others = machineBusyMs() - busyStart - server - postgres - wrkCpu - (harness.user + harness.system) / 1000
      return {
        rssPeakMb: Math.max(peak, memoryMb(pid).now),
        cpuMs: server,
        postgresMs: postgres,
        otherCores: Math.max(0, others) / (performance.now() - started),
      }
    },
  }
}
