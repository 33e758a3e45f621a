"""One seeding helper (office_env/seeding.py): streams named by their path."""

from office_env.seeding import rng, stream_key


def test_a_path_names_one_stream_and_any_part_changes_it():
    first = [rng(11, "task", 3).random() for _ in range(3)]
    assert first == [rng(11, "task", 3).random() for _ in range(3)]
    others = {rng(12, "task", 3).random(), rng(11, "task", 4).random(), rng(11, "plan", 3).random(),
              rng(11, "task", "3").random()}
    assert rng(11, "task", 3).random() not in others


def test_the_key_is_json_so_a_part_cannot_run_into_the_next():
    assert stream_key("a:b", "c") != stream_key("a", "b:c")
    assert stream_key(1, [2, 3]) == '[1, [2, 3]]'
