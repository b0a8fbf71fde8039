// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a C++ thread pool, as most C++ servers have one.  Four
 * std::thread workers take tasks from a queue guarded by a std::mutex and
 * a std::condition_variable; each task fills a plain result slot and
 * counts down a latch of its own (a mutex and a condition variable); the
 * submitter waits for the latch, then reads every slot and hands the slots
 * to the next batch.  The queue's nodes are heap memory that the
 * submitter allocates and a worker frees.
 *
 * Expected: race-free
 */
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#define SITE __attribute__((noinline, noipa))

static const int WORKERS = 4, BATCHES = 400, TASKS = 16;

class pool {
public:
	explicit pool(int n)
	{
		for (int i = 0; i < n; i++)
			threads.emplace_back([this] { work(); });
	}
	~pool()
	{
		{
			std::lock_guard<std::mutex> g(lock);
			stopping = true;
		}
		wake.notify_all();
		for (auto &t : threads)
			t.join();
	}
	void submit(std::function<void()> task)
	{
		{
			std::lock_guard<std::mutex> g(lock);
			tasks.push_back(std::move(task));
		}
		wake.notify_one();
	}

private:
	void work()
	{
		for (;;) {
			std::function<void()> task;
			{
				std::unique_lock<std::mutex> g(lock);
				wake.wait(g, [this] { return stopping || !tasks.empty(); });
				if (tasks.empty())
					return;
				task = std::move(tasks.front());
				tasks.pop_front();
			}
			task();
		}
	}
	std::mutex lock;
	std::condition_variable wake;
	std::deque<std::function<void()>> tasks;
	std::vector<std::thread> threads;
	bool stopping = false;
};

class latch {
public:
	explicit latch(int n) : left(n) {}
	void count_down()
	{
		std::lock_guard<std::mutex> g(lock);
		if (--left == 0)
			done.notify_all();
	}
	void wait()
	{
		std::unique_lock<std::mutex> g(lock);
		done.wait(g, [this] { return left == 0; });
	}

private:
	std::mutex lock;
	std::condition_variable done;
	int left;
};

static long results[TASKS];

static SITE void compute(int slot, long v)
{
	results[slot] = v * v;
}

static SITE long collect(void)
{
	long s = 0;

	for (int i = 0; i < TASKS; i++)
		s += results[i];
	return s;
}

int main()
{
	long sum = 0, want = 0;
	pool p(WORKERS);

	for (int b = 0; b < BATCHES; b++) {
		latch l(TASKS);

		for (int i = 0; i < TASKS; i++) {
			long v = b + i;

			want += v * v;
			p.submit([i, v, &l] {
				compute(i, v);
				l.count_down();
			});
		}
		l.wait();
		sum += collect();
	}
	if (sum != want) {
		std::fprintf(stderr, "sum %ld, want %ld\n", sum, want);
		return 1;
	}
	return 0;
}
