// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: results handed over by std::async and std::promise /
 * std::future.  Each round, std::async runs a task on a new thread that
 * fills a plain buffer the caller reads after future::get(), and a
 * long-lived worker fills another buffer for each std::promise it takes
 * from the caller and sets its value; the caller reads the buffer after
 * get(), then writes it again for the next round.  libstdc++'s future
 * waits on an atomic status word (a plain load, then a futex) that
 * set_value() changes with an exchange.
 *
 * Expected: race-free
 */
#include <cstdio>
#include <future>
#include <mutex>
#include <condition_variable>
#include <thread>

#define SITE __attribute__((noinline, noipa))

static const int ROUNDS = 500;

static long async_buf[16], promise_buf[16];

static SITE void fill(long *buf, long v)
{
	for (int i = 0; i < 16; i++)
		buf[i] = v + i;
}

static SITE long sum(const long *buf)
{
	long s = 0;

	for (int i = 0; i < 16; i++)
		s += buf[i];
	return s;
}

struct mailbox {
	std::mutex lock;
	std::condition_variable cv;
	std::promise<long> *p = nullptr;
	long v = 0;
	bool stop = false;
};

static void worker(mailbox *mb)
{
	for (;;) {
		std::promise<long> *p;
		long v;
		{
			std::unique_lock<std::mutex> g(mb->lock);
			mb->cv.wait(g, [mb] { return mb->stop || mb->p; });
			if (!mb->p)
				return;
			p = mb->p;
			v = mb->v;
			mb->p = nullptr;
		}
		fill(promise_buf, v);
		p->set_value(v);
	}
}

int main()
{
	mailbox mb;
	std::thread w(worker, &mb);
	long got = 0, want = 0;

	for (long r = 0; r < ROUNDS; r++) {
		std::future<long> f = std::async(std::launch::async, [r] {
			fill(async_buf, r);
			return r;
		});
		std::promise<long> p;
		std::future<long> pf = p.get_future();
		{
			std::lock_guard<std::mutex> g(mb.lock);
			mb.p = &p;
			mb.v = r;
		}
		mb.cv.notify_one();
		f.get();
		pf.get();
		got += sum(async_buf) + sum(promise_buf);
		want += 2 * (16 * r + 120);
		fill(async_buf, -1);
		fill(promise_buf, -1);
	}
	{
		std::lock_guard<std::mutex> g(mb.lock);
		mb.stop = true;
	}
	mb.cv.notify_one();
	w.join();
	if (got != want) {
		fprintf(stderr, "a result was lost\n");
		return 1;
	}
	return 0;
}
