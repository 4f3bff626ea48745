// SPDX-License-Identifier: GPL-2.0
/*
 * java -cp build/vm/progs/java JavaSplit SECONDS: two call chains of
 * known shares, main -> outerAlpha -> hotAlpha (three calls for each) and
 * main -> outerBeta -> hotBeta, each leaf a loop the JIT compiles. It
 * measures the thread CPU time of each chain itself and prints
 *	javasplit: alpha=NS beta=NS
 */
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

	static void outerAlpha() {
		sink += hotAlpha(1_000_000);
	}

	static void outerBeta() {
		sink += hotBeta(1_000_000);
	}

	public static void main(String[] args) {
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
		long alpha = 0, beta = 0;

		while (System.nanoTime() < end) {
			long t0 = threads.getCurrentThreadCpuTime();
			for (int i = 0; i < 3; i++)
				outerAlpha();
			long t1 = threads.getCurrentThreadCpuTime();
			outerBeta();
			long t2 = threads.getCurrentThreadCpuTime();
			alpha += t1 - t0;
			beta += t2 - t1;
		}
		System.out.println("javasplit: alpha=" + alpha + " beta=" + beta + " sink=" + sink);
	}
}
