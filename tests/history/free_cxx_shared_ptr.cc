// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: messages shared by std::shared_ptr, as C++ servers pass
 * requests and buffers.  A producer (std::thread) makes each message with
 * std::make_shared, fills it, and hands a copy of the pointer to each of
 * two consumers through queues guarded by a std::mutex and a
 * std::condition_variable, then drops its own.  Each consumer reads the
 * message and drops its copy: whichever thread drops the last reference
 * runs the destructor, which writes the message, and frees it.  The
 * reference count orders them: each release is a locked decrement
 * (acq_rel), and libstdc++'s last-reference fast path is an acquire load
 * of both counts (a plain mov) that skips the decrement.
 *
 * Expected: race-free
 */
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#define SITE __attribute__((noinline, noipa))

static const int MESSAGES = 5000;

struct message {
	long words[8];
	~message();
};

static SITE void fill(message *m, long v)
{
	for (int i = 0; i < 8; i++)
		m->words[i] = v + i;
}

static SITE long read_words(const message *m)
{
	return m->words[0] + m->words[7];
}

/* The destructor scrubs the message, as one that owns a resource does. */
static SITE void scrub(message *m)
{
	for (int i = 0; i < 8; i++)
		m->words[i] = 0;
}

message::~message()
{
	scrub(this);
}

class channel {
public:
	void put(std::shared_ptr<message> m)
	{
		{
			std::lock_guard<std::mutex> g(lock);
			items.push_back(std::move(m));
		}
		ready.notify_one();
	}
	std::shared_ptr<message> take()
	{
		std::unique_lock<std::mutex> g(lock);
		ready.wait(g, [this] { return !items.empty(); });
		auto m = std::move(items.front());
		items.pop_front();
		return m;
	}

private:
	std::mutex lock;
	std::condition_variable ready;
	std::deque<std::shared_ptr<message>> items;
};

static long consume(channel *c)
{
	long sum = 0;

	for (int i = 0; i < MESSAGES; i++) {
		std::shared_ptr<message> m = c->take();

		sum += read_words(m.get());
	}
	return sum;
}

int main()
{
	channel a, b;
	long sum_a = 0, sum_b = 0;
	std::thread ta([&] { sum_a = consume(&a); });
	std::thread tb([&] { sum_b = consume(&b); });

	for (int i = 0; i < MESSAGES; i++) {
		auto m = std::make_shared<message>();

		fill(m.get(), i);
		a.put(m);
		b.put(std::move(m));
	}
	ta.join();
	tb.join();
	long want = 0;
	for (long i = 0; i < MESSAGES; i++)
		want += 2 * i + 7;
	if (sum_a != want || sum_b != want) {
		fprintf(stderr, "a message was lost\n");
		return 1;
	}
	return 0;
}
