// SPDX-License-Identifier: GPL-2.0-only
/*
 * A word count written the way ordinary C++ code is, for run-real.sh's
 * `cxx-wordcount`: race-free by design, built with -O2 and no -g, stripped
 * as a distribution ships it, so only the run-time rules see its atomics.
 *
 *   cxx_wordcount FILE [MAX_LINES]
 *
 * The main thread reads FILE into batches of lines, each a
 * std::shared_ptr<const std::vector<std::string>>, and hands them to two
 * std::thread workers through a bounded queue (a std::mutex and two
 * std::condition_variable).  Each worker counts words in a map of its own
 * and merges it into the shared one under a mutex when it ends; batches are
 * freed by whichever thread drops the last reference.  A third thread
 * reports progress from a relaxed std::atomic counter the workers add to,
 * and stops when a std::atomic<bool> is stored with release order.  A
 * function-local static (the __cxa_guard protocol) and std::call_once give
 * the workers a table built once.  The output (the 20 commonest words and
 * the totals) is the same in every run.
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

using batch = std::shared_ptr<const std::vector<std::string>>;

// A bounded queue: producers wait while it is full, consumers while empty.
class queue {
public:
	void push(batch b)
	{
		std::unique_lock<std::mutex> g(lock);
		not_full.wait(g, [this] { return items.size() < 8; });
		items.push_back(std::move(b));
		not_empty.notify_one();
	}
	// An empty pointer once the queue is closed and drained.
	batch pop()
	{
		std::unique_lock<std::mutex> g(lock);
		not_empty.wait(g, [this] { return closed || !items.empty(); });
		if (items.empty())
			return nullptr;
		batch b = std::move(items.front());
		items.pop_front();
		not_full.notify_one();
		return b;
	}
	void close()
	{
		std::lock_guard<std::mutex> g(lock);
		closed = true;
		not_empty.notify_all();
	}

private:
	std::mutex lock;
	std::condition_variable not_empty, not_full;
	std::deque<batch> items;
	bool closed = false;
};

static std::atomic<unsigned long> words_seen{0};
static std::atomic<bool> finished{false};
static std::mutex totals_lock;
static std::map<std::string, unsigned long> totals;
static std::once_flag banner_once;
static std::string banner;

// Built by the first worker that needs it, as a magic static.
static const std::vector<bool> &separators()
{
	static const std::vector<bool> table = [] {
		std::vector<bool> t(256, false);
		for (int c = 0; c < 256; c++)
			t[c] = !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
		return t;
	}();
	return table;
}

static void count_line(const std::string &line,
		       std::unordered_map<std::string, unsigned long> &mine)
{
	const std::vector<bool> &sep = separators();
	size_t i = 0, n = line.size();
	unsigned long words = 0;

	while (i < n) {
		while (i < n && sep[(unsigned char)line[i]])
			i++;
		size_t start = i;
		while (i < n && !sep[(unsigned char)line[i]])
			i++;
		if (i > start) {
			mine[line.substr(start, i - start)]++;
			words++;
		}
	}
	words_seen.fetch_add(words, std::memory_order_relaxed);
}

static void worker(queue &q)
{
	std::unordered_map<std::string, unsigned long> mine;

	std::call_once(banner_once, [] { banner = "word count"; });
	while (batch b = q.pop())
		for (const std::string &line : *b)
			count_line(line, mine);
	std::lock_guard<std::mutex> g(totals_lock);
	for (auto &kv : mine)
		totals[kv.first] += kv.second;
}

static void reporter()
{
	unsigned long last = 0;

	while (!finished.load(std::memory_order_acquire)) {
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		last = words_seen.load(std::memory_order_relaxed);
	}
	std::fprintf(stderr, "progress: %lu words at the last look\n", last);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: %s FILE [MAX_LINES]\n", argv[0]);
		return 2;
	}
	unsigned long max_lines = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : ~0UL;
	std::ifstream in(argv[1]);
	if (!in) {
		std::perror(argv[1]);
		return 1;
	}
	queue q;
	std::thread workers[2] = {std::thread(worker, std::ref(q)),
				  std::thread(worker, std::ref(q))};
	std::thread progress(reporter);
	std::string line;
	unsigned long lines = 0;
	auto next = std::make_shared<std::vector<std::string>>();

	while (lines < max_lines && std::getline(in, line)) {
		next->push_back(line);
		if (++lines % 512 == 0) {
			q.push(std::move(next));
			next = std::make_shared<std::vector<std::string>>();
		}
	}
	q.push(std::move(next));
	q.close();
	for (auto &t : workers)
		t.join();
	finished.store(true, std::memory_order_release);
	progress.join();

	std::vector<std::pair<unsigned long, std::string>> top;
	for (auto &kv : totals)
		top.emplace_back(kv.second, kv.first);
	std::partial_sort(top.begin(), top.begin() + std::min<size_t>(20, top.size()), top.end(),
			  [](const auto &a, const auto &b) {
				  return a.first != b.first ? a.first > b.first : a.second < b.second;
			  });
	std::printf("%s: %lu lines, %lu words, %zu distinct\n", banner.c_str(), lines,
		    words_seen.load(), totals.size());
	for (size_t i = 0; i < top.size() && i < 20; i++)
		std::printf("%8lu %s\n", top[i].first, top[i].second.c_str());
	return 0;
}
