"""Fine-tuning, for every task: the task interface (`task.Task`: what GLUE, SQuAD, NER and SWAG
each own), the options every task shares (`options.FineTuningOptions`) and one driver that
does the rest (`driver.run_task`). Importing the package starts no TensorFlow: the scripts
read their options (`options`) before it starts."""
