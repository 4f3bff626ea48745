// SPDX-License-Identifier: GPL-2.0
/*
 * java -cp build/vm/progs/java JavaSplit SECONDS: two call chains of
 * known shares, main -> outerAlpha -> hotAlpha (three calls in four) and
 * main -> outerBeta -> hotBeta, each leaf a loop the JIT compiles. Each
 * call is alpha's with probability 3/4, of a random length, so that no
 * period of the calls can beat with the sampling timer's. It measures the
 * thread CPU time of each chain itself, runs until the two have had
 * SECONDS of it (of CPU time, not of the clock: a guest its host starves
 * still has as much work sampled; at most 15 times SECONDS by the clock)
 * and prints
 *	javasplit: alpha=NS beta=NS
 * java ... JavaSplit --units runs the two chains on command, for
 * scripts/bench-guest (insns part runtimes): for each line N it reads,
 * N times each, then prints "done".
 */
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class JavaSplit {
	static long sink;

	static long hotAlpha(long n) {
		long x = 0;
		for (long i = 0; i < n; i++)
			x += i * 31 ^ (x >>> 3);
		return x;
	}

	static long hotBeta(long n) {
		long x = 1;
		for (long i = 0; i < n; i++)
			x += i * 17 ^ (x >>> 5);
		return x;
	}

	static void outerAlpha(long n) {
		sink += hotAlpha(n);
	}

	static void outerBeta(long n) {
		sink += hotBeta(n);
	}

	static void units() throws IOException {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));

		for (String line; (line = in.readLine()) != null;) {
			for (long k = Long.parseLong(line.trim()); k > 0; k--) {
				outerAlpha(30_000);
				outerBeta(10_000);
			}
			System.out.println("done");
			System.out.flush();
		}
	}

	public static void main(String[] args) throws IOException {
		if (args[0].equals("--units")) {
			units();
			return;
		}
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long budget = (long) (Double.parseDouble(args[0]) * 1e9);
		long end = System.nanoTime() + 15 * budget;
		long alpha = 0, beta = 0;
		/* xorshift64: the calls' order and lengths (500,000 to 1,500,000). */
		long state = ProcessHandle.current().pid() * 0x9e3779b97f4a7c15L | 1;

		while (alpha + beta < budget && System.nanoTime() < end) {
			state ^= state << 13;
			state ^= state >>> 7;
			state ^= state << 17;
			long n = 500_000 + Long.remainderUnsigned(state >>> 8, 1_000_000);
			long t0 = threads.getCurrentThreadCpuTime();
			if ((state & 3) != 0) {
				outerAlpha(n);
				alpha += threads.getCurrentThreadCpuTime() - t0;
			} else {
				outerBeta(n);
				beta += threads.getCurrentThreadCpuTime() - t0;
			}
		}
		System.out.println("javasplit: alpha=" + alpha + " beta=" + beta + " sink=" + sink);
	}
}
