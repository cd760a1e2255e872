// The training text of the synthetic test vocabularies.
//
// Written for this file (not taken from anywhere): everyday English, a bit of
// technical prose, and small C++ / Python / JSON / shell snippets, so the
// learned merges cover words, indentation, operators and punctuation. Its
// bytes fix the vocabulary: editing it changes every generated model that
// uses a synthetic tokenizer, so treat it as frozen.
#include <string_view>

#include "models/test_model_generator_tokenizer.h"

namespace kazeia::gen {

namespace {

constexpr std::string_view kText = R"TXT(The morning was cold and clear. She opened the window, looked at the garden, and
decided that the day was good for a long walk. The path went down to the river,
then along the water to the old bridge, where the children were throwing stones.
"Do you want to come with us?" she asked her brother. He said that he would rather
stay at home and read, because the book he had started was better than any walk.
In the afternoon the weather changed. Clouds came from the west, the wind turned,
and the first drops of rain fell on the roof. They made tea, sat by the fire, and
talked about the things they wanted to do in the spring: paint the kitchen, plant
new trees, visit their friends in the north, and learn to cook the bread that their
grandmother used to make every Sunday morning.

A language model reads a sequence of tokens and predicts the next one. Each token
is a number; the model turns it into a vector, passes the vector through a stack of
layers, and produces a score for every token in the vocabulary. The scores become
probabilities, and a sampler picks the next token. The process repeats until the
model writes an end token or the caller stops it. Attention lets every position
look at the positions before it; a cache keeps the keys and values of the past, so
each new token costs only one step. Quantization stores the weights with fewer bits:
four bits per weight instead of sixteen makes the file four times smaller, and the
error it adds is small when the blocks are chosen well.

Questions and answers:
Q: What is the capital of France? A: Paris.
Q: How many days are there in a week? A: There are seven days in a week.
Q: What time is it? A: It is ten past three in the afternoon.
Q: Can you help me with this problem? A: Of course. Tell me what you have tried.

The numbers 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 32, 64, 128, 256, 512, 1024 and
2048 appear often in programs. Prices were 3.50, 12.99 and 100.00; the meeting is
at 09:30 on 2024-05-17, in room 42.

#include <cstdint>
#include <string>
#include <vector>

// Returns the sum of the values in the list.
int64_t sum_values(const std::vector<int64_t>& values) {
    int64_t total = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        total += values[i];
    }
    return total;
}

struct Point {
    float x = 0.0f;
    float y = 0.0f;
};

static float distance(const Point& a, const Point& b) {
    const float dx = a.x - b.x;
    const float dy = a.y - b.y;
    return std::sqrt(dx * dx + dy * dy);
}

class Counter {
 public:
    void add(const std::string& word) { counts_[word] += 1; }
    int count(const std::string& word) const {
        auto it = counts_.find(word);
        return it == counts_.end() ? 0 : it->second;
    }

 private:
    std::map<std::string, int> counts_;
};

def read_lines(path):
    """Return the lines of a text file, without the trailing newline."""
    with open(path, "r", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def count_words(lines):
    counts = {}
    for line in lines:
        for word in line.split():
            counts[word] = counts.get(word, 0) + 1
    return counts


if __name__ == "__main__":
    import sys
    lines = read_lines(sys.argv[1])
    for word, n in sorted(count_words(lines).items()):
        print(f"{word}: {n}")

{"name": "test", "version": 2, "enabled": true, "values": [1, 2, 3], "config": {"path": "/tmp/data", "size": 4096}}
{"role": "user", "content": "What is the weather like today?"}
{"role": "assistant", "content": "It is sunny and warm, with a light wind from the south."}

$ mkdir -p build && cd build
$ cmake .. -G Ninja -DCMAKE_BUILD_TYPE=Release
$ ninja && ctest --output-on-failure
error: the file could not be opened: No such file or directory
warning: unused variable 'result' [-Wunused-variable]

## Notes for the next release

- Fixed a crash when the input file was empty.
- The server now returns an error instead of hanging when the model cannot be loaded.
- Added a `--threads` option; the default uses every available core.
- Documentation: new examples for the command line and for the library.

| name    | size   | speed      |
|---------|--------|------------|
| small   | 120 MB | 85 tok/s   |
| medium  | 480 MB | 31 tok/s   |

SELECT id, name, created_at FROM users WHERE active = 1 ORDER BY created_at DESC LIMIT 10;
INSERT INTO events (user_id, kind, payload) VALUES (42, 'login', '{"ip": "10.0.0.7"}');

fn main() {
    let words = vec!["apple", "banana", "cherry"];
    for (i, w) in words.iter().enumerate() {
        println!("{}: {}", i, w);
    }
}

function greet(name) {
  const message = `Hello, ${name}!`;
  console.log(message);
  return message.length;
}

<html>
  <body>
    <p class="note">This page is generated. Do not edit it by hand.</p>
  </body>
</html>

The station was quiet at night. A man in a grey coat waited on the platform, reading
the timetable again and again, as if the numbers might change. When the last train
finally arrived, he did not get on. He watched the doors close, the lights move away
into the dark, and then he walked back to the town, where a window was still open and
someone was playing the piano. Nobody asked him why he had come, and he never told
anyone what he had been waiting for.

Good software is easy to change. Keep functions short, give things clear names, write
tests for the behaviour you care about, and delete code that nobody uses. When a bug
appears, first write a test that fails, then fix the code until the test passes. Read
the error message carefully: it usually says exactly what went wrong and where.

Le matin, nous avons pris le train pour la ville. Il faisait beau et les rues
étaient pleines de monde. Elle a acheté du pain, du fromage et des fruits au marché.
Der Zug kommt um acht Uhr an, und wir gehen dann zusammen in die Stadt.
)TXT";

}  // namespace

std::string_view tokenizer_training_text() { return kText; }

}  // namespace kazeia::gen
