"""What the numbers are: the attribution methods (`attribution`), attention rollout
(`rollout`), how faithful the methods are (`faithfulness`), the bootstrap intervals
every measure reports (`bootstrap`), the attention heads' statistics
and importance (`heads`), and each text's words ranked by a method (`token_ranking`)."""
