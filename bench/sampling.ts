// Resource sampling from /proc during a scenario: the server's RSS every 200 ms (its peak), and CPU time
// (utime + stime) of the server, of PostgreSQL, of wrk and of the whole machine, so that other people's work on a
// shared machine can be told apart from the bench's own.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { performance } from 'node:perf_hooks'

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/** Resident memory of a process in MB (0 once it has ended). */
export function rssMb(pid: number): number {
  return rssKb(pid) / 1024
}

function rssKb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match?.[1] ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

function cpuMs(pid: number): number {
  try {
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  } catch {
    return 0
  }
}

/** CPU time the whole machine spent busy (all CPUs, /proc/stat), in milliseconds. */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? []
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS
}

/** CPU time of each PostgreSQL process (ours, and those of anyone else using the same server). */
function postgresCpuMs(): Map<number, number> {
  const cpu = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
        cpu.set(Number(entry), cpuMs(Number(entry)))
    } catch {
      // the process ended meanwhile
    }
  }
  return cpu
}

/** CPU the PostgreSQL processes used since `before` (a backend that ended meanwhile is not counted). */
function postgresCpuSince(before: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of postgresCpuMs()) total += ms - (before.get(pid) ?? 0)
  return total
}

/** Starts counting PostgreSQL's CPU (all its processes); the function returned says how many ms since. */
export function postgresCpuMeter(): () => number {
  const before = postgresCpuMs()
  return () => postgresCpuSince(before)
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
  /**
   * CPUs (in cores, on average) used by everything else than the server under test, wrk, PostgreSQL and this
   * harness: other people's work on a shared machine. Near 0 on a quiet machine.
   */
  otherCores: number
  /** CPU of all PostgreSQL processes (the bench's backends, plus anyone else's on a shared server). */
  postgresMs: number
  /** CPU of wrk (sampled every 200 ms, so slightly under). */
  wrkMs: number
  /** CPUs left idle, in cores, on average. */
  idleCores: number
}

/** Samples the server's RSS every 200 ms (peak) and the CPU use of it and of the rest of the machine. */
export function sampleScenario(pid: number): { wrkStarted: (pid: number) => void; stop: () => Usage } {
  let peak = rssKb(pid)
  const started = performance.now()
  const cpuStart = cpuMs(pid)
  const busyStart = machineBusyMs()
  const pgStart = postgresCpuMs()
  const harnessStart = process.cpuUsage()
  let wrkPid = 0
  let wrkCpu = 0
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(pid))
    if (wrkPid) wrkCpu = Math.max(wrkCpu, cpuMs(wrkPid))
  }, 200)
  return {
    wrkStarted: (p) => {
      wrkPid = p
    },
    stop: () => {
      clearInterval(timer)
      peak = Math.max(peak, rssKb(pid))
      const server = cpuMs(pid) - cpuStart
      const harness = process.cpuUsage(harnessStart)
      const postgres = postgresCpuSince(pgStart)
      const busy = machineBusyMs() - busyStart
      const others = busy - server - postgres - wrkCpu - (harness.user + harness.system) / 1000
      const elapsed = performance.now() - started
      return {
        rssPeakMb: peak / 1024,
        cpuMs: server,
        otherCores: Math.max(0, others) / elapsed,
        postgresMs: postgres,
        wrkMs: wrkCpu,
        idleCores: Math.max(0, os.availableParallelism() - busy / elapsed),
      }
    },
  }
}
